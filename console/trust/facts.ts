// What a security reviewer asks of a self-hosted gateway, generated from the running config (the snapshot and the
// process's settings), so /trust cannot drift from what runs. Pure: the page and security.txt render these facts.
import type { Snapshot } from '../../gateway/contract/snapshot.ts';

export interface Subprocessor {
  provider: string;
  host: string;
  transport: 'https' | 'http' | 'in process';
  models: string[];
}

export interface TrustFacts {
  stored: string[];
  neverStored: string[];
  retention: Array<{ what: string; where: string; howLong: string }>;
  subprocessors: Subprocessor[];
  inTransit: Array<{ link: string; state: string }>;
  atRest: string[];
  contact: string[];
  policy: string | null;
  certifications: string;
}

export interface SecurityTxt {
  contact: string[];
  expires: string;
  policy: string | null;
  canonical: string | null;
}

const DAY_MS = 86_400_000;

/** Contacts from SVC_SECURITY_CONTACT (comma-separated): an e-mail address becomes a mailto: URI (RFC 9116 §2.5.3). */
export function contacts(env: Record<string, string | undefined>): string[] {
  return (env.SVC_SECURITY_CONTACT ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .map((c) => (/^[a-z][a-z0-9+.-]*:/i.test(c) ? c : c.includes('@') ? `mailto:${c}` : c));
}

function tlsOf(url: string | undefined, secure: (u: URL) => boolean): string {
  if (!url) return 'not used';
  try {
    return secure(new URL(url.split(',')[0] as string)) ? 'TLS' : 'not encrypted (plain TCP): put it on a private network, or use TLS';
  } catch {
    return 'unknown (unparsable URL)';
  }
}

export function trustFacts(snapshot: Snapshot, env: Record<string, string | undefined>): TrustFacts {
  const byHost = new Map<string, Subprocessor>();
  for (const m of Object.values(snapshot.models)) {
    for (const t of m.targets) {
      let host = 'built-in mock (no third party)';
      let transport: Subprocessor['transport'] = 'in process';
      if (t.baseUrl) {
        try {
          const u = new URL(t.baseUrl);
          host = u.host;
          transport = u.protocol === 'https:' ? 'https' : 'http';
        } catch {
          host = t.baseUrl;
        }
      }
      const k = `${t.provider}|${host}`;
      const s = byHost.get(k) ?? { provider: t.provider, host, transport, models: [] };
      if (!s.models.includes(m.id)) s.models.push(m.id);
      byHost.set(k, s);
    }
  }
  const subprocessors = [...byHost.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  const plainUpstreams = subprocessors.filter((s) => s.transport === 'http').map((s) => s.host);
  const pgSsl = (u: URL): boolean => ['require', 'verify-ca', 'verify-full'].includes(u.searchParams.get('sslmode') ?? env.PGSSLMODE ?? '');
  return {
    stored: [
      'Usage metadata of each call: time, account, API key name, task tag, endpoint, requested and served model, upstream target, fallback and reason, status and error code, token counts, cost, latency.',
      'API keys only as HMAC-SHA-256 under a secret pepper, with their displayed form (prefix and last 4 characters).',
      'Accounts, plans, balances and limits; console sessions (a random id, kept on the server); probe results and incidents.',
    ],
    neverStored: [
      'Prompts, messages, files or answers: they pass through memory and are never written to Redis, Postgres or logs.',
      'Full API keys: shown once at creation, then nowhere.',
    ],
    retention: [
      {
        what: 'Usage events',
        where: env.DATABASE_URL
          ? 'Postgres (usage_events, monthly partitions; usage_daily rollup)'
          : env.REDIS_URL
            ? 'Redis usage streams'
            : 'process memory (the latest 10,000)',
        howLong: env.DATABASE_URL
          ? "until the operator drops a month's partition (no automatic deletion); Redis streams are trimmed once exported"
          : 'until the process ends, or the stream is trimmed',
      },
      { what: 'Probe results and incidents', where: env.DATABASE_URL ? 'Postgres' : 'process memory', howLong: '90 days' },
      { what: 'Console sessions', where: env.REDIS_URL ? 'Redis' : 'process memory', howLong: '8 hours, or until sign-out' },
      { what: 'Logs', where: 'standard output of each process', howLong: 'as your log collector keeps them (keys and credentials are redacted)' },
    ],
    subprocessors,
    inTransit: [
      {
        link: 'Clients to the gateway and the console',
        state: env.SVC_TLS_TERMINATION || 'TLS at your ingress or load balancer (the processes speak plain HTTP behind it)',
      },
      {
        link: 'Gateway to upstream providers',
        state: plainUpstreams.length === 0 ? 'HTTPS for every external upstream' : `HTTPS, except plain HTTP to ${plainUpstreams.join(', ')}`,
      },
      { link: 'Redis', state: tlsOf(env.REDIS_URL, (u) => u.protocol === 'rediss:') },
      { link: 'Postgres', state: tlsOf(env.DATABASE_URL, pgSsl) },
    ],
    atRest: [
      'Upstream credentials in Redis are sealed with AES-256-GCM (SVC_CONFIG_KEY, or a key derived from the pepper).',
      'API keys are stored only as HMACs; nothing stored can be turned back into a key.',
      env.SVC_TRUST_AT_REST || 'Disk encryption of Redis and Postgres volumes: as your installation provides it (not stated).',
    ],
    contact: contacts(env),
    policy: env.SVC_SECURITY_POLICY_URL || null,
    certifications: env.SVC_TRUST_CERTIFICATIONS || 'self-hosted: none claimed',
  };
}

/**
 * security.txt (RFC 9116) from SVC_SECURITY_CONTACT and SVC_SECURITY_TXT_EXPIRES (an ISO date; default 180 days from
 * `now`, the RFC recommending less than a year). null when no contact is configured: Contact is required.
 */
export function securityTxt(env: Record<string, string | undefined>, now: number): SecurityTxt | null {
  const contact = contacts(env);
  if (contact.length === 0) return null;
  const raw = env.SVC_SECURITY_TXT_EXPIRES;
  const at = raw ? Date.parse(raw) : now + 180 * DAY_MS;
  if (!Number.isFinite(at)) throw new Error('SVC_SECURITY_TXT_EXPIRES must be a date (ISO 8601, e.g. 2027-06-30T00:00:00Z)');
  const base = env.SVC_PUBLIC_URL?.replace(/\/+$/, '');
  return {
    contact,
    expires: new Date(at).toISOString(),
    policy: env.SVC_SECURITY_POLICY_URL || null,
    canonical: base ? `${base}/.well-known/security.txt` : null,
  };
}

export function renderSecurityTxt(s: SecurityTxt): string {
  const lines = [
    '# Security contact of this svc-gateway installation (RFC 9116).',
    ...s.contact.map((c) => `Contact: ${c}`),
    `Expires: ${s.expires}`,
    ...(s.policy ? [`Policy: ${s.policy}`] : []),
    ...(s.canonical ? [`Canonical: ${s.canonical}`] : []),
    'Preferred-Languages: en',
  ];
  return `${lines.join('\n')}\n`;
}
