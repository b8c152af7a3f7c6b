// Secret detectors: the token formats of the clouds and the common services (the kinds secretlint's recommended
// preset knows, plus Stripe, Google API keys, JWTs, Azure storage keys and this gateway's own keys), private keys and
// credentials written into URLs. Each rule names a literal its match must contain, so text without it costs one
// `includes` per rule. secretlint itself is the reference in the tests (every sample it flags, these flag); it is not
// called here: its per-call cost (about 2 ms before any text is read) is more than a whole call's.
import type { Detect, Hit } from './types.ts';

interface Rule {
  kind: string;
  /** A literal every match contains: the rule runs only on text that has it. */
  needle: string;
  re: RegExp;
}

const B = '(?<![A-Za-z0-9_-])'; // not inside a longer token
const E = '(?![A-Za-z0-9_-])';
const rule = (kind: string, needle: string, body: string, flags = 'g'): Rule => ({ kind, needle, re: new RegExp(body, flags) });

const RULES: readonly Rule[] = [
  rule('aws-access-key', 'A', `${B}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}${E}`),
  rule(
    'aws-secret-key',
    '',
    `(?:aws_?secret_?access_?key|secret_?access_?key|SecretAccessKey)["']?\\s*[:=]\\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])`,
    'gi',
  ),
  rule(
    'private-key',
    '-----BEGIN',
    `-----BEGIN (?:[A-Z0-9]+ ){0,2}PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]*?-----END (?:[A-Z0-9]+ ){0,2}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\\s\\\\n:-]*)`,
  ),
  rule('google-api-key', 'AIza', `${B}AIza[0-9A-Za-z_-]{35}${E}`),
  rule('github-token', 'gh', `${B}gh[pousr]_[A-Za-z0-9]{36,251}${E}`),
  rule('github-token', 'github_pat_', `${B}github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}${E}`),
  rule('gitlab-token', 'glpat-', `${B}glpat-[A-Za-z0-9_-]{20,}${E}`),
  rule('slack-token', 'xox', `${B}xox[abposr]-[0-9A-Za-z-]{10,250}${E}`),
  rule('slack-token', 'xapp-', `${B}xapp-\\d-[A-Z0-9]+-\\d+-[a-z0-9]+${E}`),
  rule('slack-webhook', 'hooks.slack.com', `https://hooks\\.slack\\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}`),
  rule('openai-key', 'T3BlbkFJ', `${B}sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}${E}`),
  rule('openai-key', 'sk-proj-', `${B}sk-proj-[A-Za-z0-9_-]{40,}${E}`),
  rule('anthropic-key', 'sk-ant-', `${B}sk-ant-(?:api|admin|oat)\\d{2}-[A-Za-z0-9_-]{80,}${E}`),
  rule('svc-gateway-key', 'sk-svc-', `${B}sk-svc-[A-Za-z0-9_-]{20,}${E}`),
  rule('stripe-key', '_live_', `${B}(?:sk|rk)_live_[A-Za-z0-9]{20,247}${E}`),
  rule('stripe-key', '_test_', `${B}(?:sk|rk)_test_[A-Za-z0-9]{20,247}${E}`),
  rule('npm-token', 'npm_', `${B}npm_[A-Za-z0-9]{36}${E}`),
  rule('sendgrid-key', 'SG.', `${B}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}${E}`),
  rule('shopify-token', 'shp', `${B}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}${E}`),
  rule('linear-key', 'lin_api_', `${B}lin_api_[A-Za-z0-9]{40}${E}`),
  rule('databricks-token', 'dapi', `${B}dapi[a-f0-9]{32}(?:-\\d)?${E}`),
  rule('docker-token', 'dckr_pat_', `${B}dckr_pat_[A-Za-z0-9_-]{27,}${E}`),
  rule('figma-token', 'figd_', `${B}figd_[A-Za-z0-9_-]{40,}${E}`),
  rule('grafana-token', 'glsa_', `${B}glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}${E}`),
  rule('grafana-token', 'glc_', `${B}glc_[A-Za-z0-9+/]{32,}={0,2}`),
  rule('groq-key', 'gsk_', `${B}gsk_[A-Za-z0-9]{52}${E}`),
  rule('vault-token', 'hv', `${B}hv[sbr]\\.[A-Za-z0-9_-]{24,}${E}`),
  rule('huggingface-token', 'hf_', `${B}hf_[A-Za-z]{34}${E}`),
  rule('notion-token', 'ntn_', `${B}ntn_\\d{11}[A-Za-z0-9]{35}${E}`),
  rule('onepassword-token', 'ops_', `${B}ops_eyJ[A-Za-z0-9+/=_-]{100,}`),
  rule('azure-storage-key', 'AccountKey=', `AccountKey=[A-Za-z0-9+/]{86}==`),
  rule('jwt', 'eyJ', `${B}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}${E}`),
  // user:password@ in a URL of any scheme (databases, brokers, HTTP basic auth).
  rule('url-credentials', '://', `[a-z][a-z0-9+.-]{1,20}://[^\\s/:@"'<>]{1,100}:[^\\s/@"'<>]{1,200}@[A-Za-z0-9.-]+`, 'gi'),
];

export const secrets: Detect = (text) => {
  const hits: Hit[] = [];
  for (const r of RULES) {
    if (r.needle !== '' && !text.includes(r.needle)) continue;
    r.re.lastIndex = 0;
    for (const m of text.matchAll(r.re)) {
      // A rule with a group masks the secret only, not the name written before it.
      const at = m[1] !== undefined ? m.index + m[0].lastIndexOf(m[1]) : m.index;
      const len = m[1] !== undefined ? m[1].length : m[0].length;
      hits.push({ start: at, end: at + len, kind: r.kind });
    }
  }
  return hits;
};

/** High-entropy tokens (opt-in: it also finds hashes and ids): 32+ characters of a key alphabet, mixed classes, > 4 bits a character. */
const TOKEN = /(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{32,512}(?![A-Za-z0-9+/_=-])/g;

export const highEntropy: Detect = (text) => {
  const hits: Hit[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const s = m[0];
    if (!/[a-z]/.test(s) || !/[A-Z]/.test(s) || !/\d/.test(s)) continue;
    if (entropy(s) > 4) hits.push({ start: m.index, end: m.index + s.length, kind: 'high-entropy' });
  }
  return hits;
};

function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}
