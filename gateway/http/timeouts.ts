// The API port's limits on slow clients (fastify's and Node's server timeouts), and their settings.

/** How long a client may take: the API port's defence against slow or stalled clients. */
export interface ServerTimeouts {
  /** From the connection (or the previous request) to the end of the request headers. */
  headersMs: number;
  /** From the connection to the end of the request body: a body sent a byte at a time is cut here. */
  requestMs: number;
  /** A connection with no bytes either way for this long is closed (a stream the upstream keeps silent included). */
  idleMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 60_000, idleMs: 300_000 };

type Env = Record<string, string | undefined>;

const VARS: Record<keyof ServerTimeouts, string> = {
  headersMs: 'SVC_HEADERS_TIMEOUT_MS',
  requestMs: 'SVC_REQUEST_TIMEOUT_MS',
  idleMs: 'SVC_IDLE_TIMEOUT_MS',
};

/** Throws an Error naming the variable when a value is not a whole number of milliseconds from 100 on. */
export function timeoutsFromEnv(env: Env): ServerTimeouts {
  const out = { ...DEFAULT_TIMEOUTS };
  for (const field of Object.keys(VARS) as Array<keyof ServerTimeouts>) {
    const name = VARS[field];
    const v = env[name];
    if (v === undefined || v === '') continue;
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 100) throw new Error(`${name} must be a whole number of milliseconds, at least 100; got ${JSON.stringify(v)}`);
    out[field] = n;
  }
  return out;
}
