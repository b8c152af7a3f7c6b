// How the standalone gateway uses Redis (REDIS_URL): settings from the environment, and what it publishes.
import { keyringFromEnv } from '../contract/sealed-credentials.ts';
import type { KeyRecord } from '../contract/snapshot.ts';
import { redisConnectionFromEnv, splitUrls } from './redis-connect.ts';
import type { RedisStoreOptions } from './redis-store.ts';
import type { LeaseOptions } from './leases.ts';

export const PEPPER_REQUIRED =
  'REDIS_URL is set but SVC_KEY_PEPPER is not. Every gateway process sharing a Redis must hash API keys ' +
  'with the same secret pepper: set SVC_KEY_PEPPER to one long random value (e.g. `openssl rand -hex 32`) in each of them.';

type Env = Record<string, string | undefined>;

function positiveInt(env: Env, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * SVC_ADMISSION_LEASES, SVC_REDIS_PREFIX, SVC_REDIS_TIMEOUT_MS, SVC_HOLD_TTL_SECONDS, SVC_REDIS_WAIT_REPLICAS, SVC_REDIS_WAIT_TIMEOUT_MS, and the connection settings of redis-connect.ts
 * (SVC_REDIS_CLUSTER, SVC_REDIS_CA_FILE, SVC_REDIS_CERT_FILE, SVC_REDIS_KEY_FILE); throws a readable error on a bad value.
 */
export function redisOptionsFromEnv(url: string, env: Env): RedisStoreOptions {
  const ttl = positiveInt(env, 'SVC_HOLD_TTL_SECONDS');
  const prefix = env.SVC_REDIS_PREFIX || undefined;
  if (prefix !== undefined && /[{}\s]/.test(prefix)) throw new Error('SVC_REDIS_PREFIX must not contain braces or spaces');
  const wait = { waitReplicas: positiveInt(env, 'SVC_REDIS_WAIT_REPLICAS'), waitTimeoutMs: positiveInt(env, 'SVC_REDIS_WAIT_TIMEOUT_MS') };
  return {
    ...redisConnectionFromEnv(url, env),
    ...wait,
    keyring: keyringFromEnv(env),
    prefix,
    commandTimeoutMs: positiveInt(env, 'SVC_REDIS_TIMEOUT_MS'),
    holdTtlMs: ttl === undefined ? undefined : ttl * 1000,
    leases: admissionLeases(env),
  };
}

/** SVC_ADMISSION_LEASES=1 turns leased admission on (gateway/state/leases.ts); unset or 0: off (the default). */
function admissionLeases(env: Env): LeaseOptions | null {
  const v = env.SVC_ADMISSION_LEASES;
  if (v === undefined || v === '' || v === '0') return null;
  if (v === '1') return {};
  throw new Error(`SVC_ADMISSION_LEASES must be 0 or 1, got ${JSON.stringify(v)}`);
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  const urls = splitUrls(url);
  if (urls.length > 1) return urls.map(redactUrl).join(',');
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}

/**
 * Keys every process can publish alike: a key generated at start exists in one process only, so with Redis
 * it is left out (and the caller warns) instead of overwriting or removing what other processes published.
 */
export function sharedKeys(keys: KeyRecord[], generated: ReadonlyArray<{ apiKey: string }>): { keys: KeyRecord[]; skipped: string[] } {
  const skipped = new Set(generated.map((g) => g.apiKey));
  return { keys: keys.filter((k) => !skipped.has(k.name)), skipped: [...skipped].sort() };
}
