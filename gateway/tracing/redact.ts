// Anything in captured prompts and completions that looks like a secret is replaced before it goes on a span:
// provider and gateway API keys (sk-..., sk-ant-..., sk-svc-...), bearer tokens, AWS access keys and secrets,
// Google API keys, GitHub and Slack tokens, JWTs, private key blocks, and `password=`/`api_key: ...` assignments.
// Deliberately eager: a false positive costs a word of a trace, a miss leaks a credential to the trace store.

const R = '[REDACTED]';

const PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, R],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${R}`],
  [/\bsk-[A-Za-z0-9_-]{12,}/g, R],
  [/\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b/g, R],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, R],
  [/\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}/g, R],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, R],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, R],
  // key = value forms, the value in quotes or up to a space: aws_secret_access_key, password, api_key, token, secret
  [
    /\b((?:aws_)?secret(?:_access)?_key|password|passwd|pwd|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret)(["']?\s*[:=]\s*["']?)[^\s"',;]{4,}/gi,
    `$1$2${R}`,
  ],
];

/** The text with every secret-looking run replaced by [REDACTED]. */
export function redact(text: string): string {
  let out = text;
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}
