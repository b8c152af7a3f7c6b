// What a security reviewer asks of a self-hosted gateway, generated from the running config (the snapshot and the
// process's settings), so /trust cannot drift from what runs. Pure: the page and security.txt render these facts.
import { isIP } from 'node:net';
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

/** What a masked host is shown as (SVC_TRUST_MASK_PRIVATE_HOSTS=1). */
export const MASKED_HOST = 'private host (masked)';

const PRIVATE_V4: Array<[number, number]> = [
  [0x0a000000, 8], // 10/8
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // link-local
  [0x64400000, 10], // 100.64/10 (carrier-grade NAT)
];
const PRIVATE_SUFFIXES = ['.local', '.localhost', '.internal', '.svc', '.cluster.local', '.lan', '.home.arpa', '.intranet', '.corp', '.private'];

/**
 * Whether an upstream `host[:port]` is private: an IP in a private, loopback, link-local or CGNAT range (IPv4, and
 * IPv6 ::1, fc00::/7, fe80::/10), or a name no public DNS answers for (one label, like a Kubernetes Service, or a
 * private suffix such as .internal, .local, .svc, .cluster.local).
 */
export function isPrivateHost(hostPort: string): boolean {
  const host = hostPort
    .replace(/^\[([^\]]+)\](:\d+)?$/, '$1')
    .replace(/^([^:]+):\d+$/, '$1')
    .toLowerCase();
  const v = isIP(host);
  if (v === 4) {
    const n = host.split('.').reduce((a, x) => a * 256 + Number(x), 0);
    return PRIVATE_V4.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
  }
  if (v === 6) return host === '::1' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host);
  return !host.includes('.') || PRIVATE_SUFFIXES.some((s) => host.endsWith(s));
}

/** SVC_TRUST_MASK_PRIVATE_HOSTS: '1' or 'true' masks; unset, '', '0' or 'false' shows hosts; anything else masks. */
export function maskPrivateHosts(env: Record<string, string | undefined>): boolean {
  const v = (env.SVC_TRUST_MASK_PRIVATE_HOSTS ?? '').trim().toLowerCase();
  return !(v === '' || v === '0' || v === 'false');
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
  const mask = maskPrivateHosts(env);
  for (const m of Object.values(snapshot.models)) {
    for (const t of m.targets) {
      let host = 'built-in mock (no third party)';
      let transport: Subprocessor['transport'] = 'in process';
      if (t.baseUrl) {
        try {
          const u = new URL(t.baseUrl);
          host = mask && isPrivateHost(u.host) ? MASKED_HOST : u.host;
          transport = u.protocol === 'https:' ? 'https' : 'http';
        } catch {
          host = mask ? MASKED_HOST : t.baseUrl;
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
