// The gateway's settings, parsed once: the command line and the environment, with the --help text. A bad value is
// an Error that names it, before anything starts (as operator/options.ts does for the operator).
import { DEFAULT_CACHE_ACCOUNT_BYTES } from './state/response-cache.ts';
import { DEFAULT_KEY_CACHE_SIZE } from './pipeline/key-cache.ts';
import { randomBytes } from 'node:crypto';
import { keyringFromEnv, type Keyring } from './contract/sealed-credentials.ts';
import { DEMO_CONFIG } from './config/standalone.ts';
import { metricsListen } from './http/metrics-server.ts';
import { timeoutsFromEnv, type ServerTimeouts } from './http/timeouts.ts';
import { trustProxyFromEnv, type TrustProxy } from './contract/trust-proxy.ts';
import { drainSeconds } from './lifecycle/drain.ts';
import { listenHost } from './lifecycle/listen-host.ts';
import { PEPPER_REQUIRED, redisOptionsFromEnv } from './state/redis-env.ts';
import type { RedisStoreOptions } from './state/redis-store.ts';
import type { History } from './availability/history.ts';
import { mcpSettingsFromEnv, type McpSettings } from './mcp/settings.ts';
import { SETTLE_DURABILITIES, type SettleDurability } from './usage/durable-settle.ts';
import { DAY_MS, DEFAULT_ACCOUNT_BYTES, DEFAULT_RETENTION_DAYS, type StoredResponsesSettings } from './stored-responses/types.ts';
import { DEFAULT_BATCH_SETTINGS, type BatchSettings } from './batches/settings.ts';
import { DEFAULT_SPOOL_ABOVE_BYTES, type SpoolSettings } from './uploads/spool.ts';

export type Env = Record<string, string | undefined>;

export const HELP = `svc-gateway: OpenAI- and Anthropic-compatible AI gateway

Usage:
  npm start -- [--config PATH] [--port N]      standalone
  npm run gateway                              cluster mode (--cluster): config and state from REDIS_URL
  npm start -- --help                          this help
  (in a checkout after npm ci; the image runs node gateway/main.ts with the same options)

Options:
  --config PATH   manifests: a YAML file with several documents, or a folder (default: $SVC_CONFIG, else the demo)
  --port N        listen port of the API (default: $PORT, else 8080); metrics are on SVC_METRICS_PORT
  --cluster       read config and keys from Redis, as written by the operator (REDIS_URL and SVC_KEY_PEPPER required);
                  not ready (/readyz 503) until the operator has published a config
  -h, --help      this help

Environment:
  PORT            listen port (8080)
  HOST            listen address of the API and the console (127.0.0.1: this machine only; the image and the Helm
                  chart set 0.0.0.0, the pod's network being the boundary there). HOST=0.0.0.0 listens on every interface.
  SVC_METRICS_PORT  port of /metrics (Prometheus), /healthz and /readyz, kept off the API port because the metrics
                    list every account's balance (9090; 0 = any free port). Keep it inside the cluster.
  SVC_METRICS_HOST  listen address of that port (default: HOST, else 127.0.0.1)
  SVC_CONFIG      manifests for standalone mode  LOG_LEVEL   fatal|error|warn|info|debug (info)
  SVC_KEY_PEPPER  secret used to hash API keys (standalone default: random per process; required with REDIS_URL)
  REDIS_URL       shared state for several gateway processes: limits, holds, balances, usage stream.
                  Each process publishes its manifests there (idempotent; credits applied once by id).
  SVC_KEY_CACHE_SIZE     API key records each process keeps, most recently used first; others are read from the
                         store (Redis: one round trip) when next used (10000; 0 = read every call)
  SVC_REDIS_TIMEOUT_MS   longest wait for one Redis command; past it the call gets 503 (1000)
  SVC_CACHE_ACCOUNT_MAX_BYTES  bytes of cached answers one account may keep (response cache; 67108864 = 64 MiB)
  SVC_FILES_MAX_BYTES    largest upload to /v1/files, in bytes (209715200 = 200 MiB, OpenAI's bound for batch files)
  SVC_FILES_RETENTION_DAYS  days an uploaded batch file and a batch's output and error files are kept (30); files and
                         batches are kept in Postgres, sealed, with DATABASE_URL, else in Redis or this process's memory
  SVC_UPLOAD_SPOOL_DIR   where uploads above SVC_UPLOAD_SPOOL_ABOVE_BYTES wait while their call runs (audio, image
                         edits): a private directory made in it, one file per upload readable by this process only,
                         deleted when the call ends (the OS's temp dir)
  SVC_UPLOAD_SPOOL_ABOVE_BYTES  uploads larger than this wait on disk, not in memory (1048576 = 1 MiB)
  SVC_BATCH_POLL_SECONDS how often this process looks at the batches not finished yet (5)
  SVC_HOLD_TTL_SECONDS   holds never settled (crashed process) are released after this (900)
  SVC_REDIS_PREFIX       prefix of every Redis key (svc)
  SVC_ADMISSION_LEASES   1: admit and settle from leased slices of a key's limits, far from its caps (0: off, the default)
  DATABASE_URL    Postgres for usage events (migrated at start); with REDIS_URL this process also runs the usage exporter,
                  and rebuilds a Redis that lost its data from the Postgres ledger (without it, money lives in Redis only)
  SVC_RECONCILE_SECONDS  with REDIS_URL and DATABASE_URL: how often Redis's money is checked against the ledger (60; 0 = never)
  SVC_SETTLE_DURABILITY  redis|postgres (redis): postgres writes each call's usage event to DATABASE_URL before its answer
                         ends (a stream: before its final event), so a Redis that loses its data loses no served call's
                         money; costs one Postgres commit per call on the hot path (docs/operations.md). Cluster mode too.
  SVC_RESPONSES_RETENTION_DAYS  stored Responses (store: true, OpenAI's default) are kept this many days (30); in
                         Postgres, sealed, with DATABASE_URL (every process shares them), else in this process's memory
  SVC_RESPONSES_ACCOUNT_MAX_BYTES  bytes one account's stored responses may hold; a store: true call past it, or a
                         previous_response_id conversation larger than it, gets 400 (67108864 = 64 MiB)
  SVC_CONSOLE_TOKEN      admin token of the console at /dashboard (at least 16 characters; default: generated, printed)
  SVC_CONSOLE_STATE      without REDIS_URL: a JSON file where the console keeps the keys it made (as HMACs) and
                         pending revocations across restarts (needs a fixed SVC_KEY_PEPPER); default: memory only
  SVC_CONSOLE_OIDC_ISSUER  OpenID Connect sign-in ("Sign in with <provider>"): the provider's issuer URL (https)
  SVC_CONSOLE_OIDC_CLIENT_ID  the console's client id at the provider (required with the issuer)
  SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE  a file holding the client secret (default: none, a public client with PKCE)
  SVC_CONSOLE_OIDC_SCOPES  scopes asked for, space- or comma-separated (openid profile email)
  SVC_CONSOLE_OIDC_USERNAME_CLAIM  the ID token claim naming the person (sub)
  SVC_CONSOLE_OIDC_GROUPS_CLAIM  the ID token claim listing their groups (groups)
  SVC_CONSOLE_OIDC_USERNAME_PREFIX  put before the user name, as the API server's --oidc-username-prefix (default: none)
  SVC_CONSOLE_OIDC_GROUPS_PREFIX  put before each group, as the API server's --oidc-groups-prefix (default: none)
  SVC_CONSOLE_OIDC_NAME  the provider's name on the sign-in button (single sign-on)
  SVC_CONSOLE_TOKEN_SIGN_IN  0: no token field on the sign-in page, its form refused (1: kept for break-glass use)
  SVC_CONSOLE_SESSION_HOURS  the longest a console session lasts, whatever its tokens say (8)
  SVC_CONSOLE_OWN_KEYS_MAX  with the create-own-keys verb: unrevoked keys one person may own per account (5)
  SVC_CONSOLE_AUDIT_RETENTION_DAYS  days the audit trail (the Activity page) keeps a record (400)
  SVC_CONSOLE_ACCESS_FILE  a YAML file giving OIDC groups and users their accounts and verbs (default: none)
  SVC_CONFIG_POLL_MS     cluster mode: how often to look for a new config besides pub/sub announcements (3000)
  SVC_DRAIN_SECONDS      on SIGTERM: /readyz turns 503 and no new connection is accepted; calls in flight may
                         finish for this long, then end (a stream with an error event); holds are settled and
                         usage flushed before exit, the last log lines given 2 s (30)
  SVC_HEADERS_TIMEOUT_MS a client's request headers must arrive within this (10000)
  SVC_REQUEST_TIMEOUT_MS a client's headers and body must arrive within this (60000)
  SVC_IDLE_TIMEOUT_MS    a connection with no byte either way for this long is closed (300000)
  SVC_TRUST_PROXY        behind proxies: a hop count (1 = one Ingress) or their addresses/CIDRs, comma-separated;
                         the client address (console sign-in limit) is then taken from X-Forwarded-For (default: none)
  SVC_TRUST_MASK_PRIVATE_HOSTS  1: /trust shows private upstream hosts (10.x, *.internal, single-label…) masked (0)
  SVC_PROBE_INTERVAL_SECONDS  availability probes of every target, unless its ModelRoute sets spec.probe (180; at least 5)
  SVC_PROBE_CONCURRENCY  availability probes in flight at most; the others wait their turn (32)
  SVC_MCP_SESSION_IDLE_MS  an MCP session (/mcp, /mcp/<server>) with no request for this long is ended: its
                         upstream sessions closed (DELETE), its id answered 404 (1800000; 0 = only when its upstream ends it)
  SVC_MCP_ALLOWED_ORIGINS  browser origins allowed on /mcp (scheme://host[:port], comma-separated); a request
                         with any other Origin is refused (DNS-rebinding protection). Default: none
  SVC_SECURITY_CONTACT   /trust and /.well-known/security.txt: e-mail addresses or URLs, comma-separated
  SVC_SECURITY_TXT_EXPIRES  security.txt Expires (ISO date; default 180 days ahead)   SVC_PUBLIC_URL  its Canonical

The demo config (${DEMO_CONFIG}) serves the built-in mock provider offline;
the keys it generates are printed once at start.`;

interface CommonOptions {
  port: number;
  host: string;
  drainMs: number;
  metrics: { port: number; host: string };
  timeouts: ServerTimeouts;
  /** SVC_TRUST_PROXY: which proxies' X-Forwarded-For to believe (the console's sign-in limit counts that client). */
  trustProxy: TrustProxy;
  logLevel: string;
  /** SVC_CACHE_ACCOUNT_MAX_BYTES: the response cache's per-account byte budget. */
  cacheAccountBytes: number;
  /** SVC_KEY_CACHE_SIZE: key records each process keeps (pipeline/key-cache.ts). */
  keyCacheSize: number;
  /** SVC_MCP_SESSION_IDLE_MS, SVC_MCP_ALLOWED_ORIGINS. */
  mcp: McpSettings;
  /** SVC_RESPONSES_*: stored Responses' retention and per-account bound; in Postgres at DATABASE_URL when set. */
  responses: StoredResponsesSettings & { databaseUrl: string | undefined };
  /** SVC_FILES_MAX_BYTES, SVC_FILES_RETENTION_DAYS, SVC_BATCH_POLL_SECONDS. */
  batches: Partial<BatchSettings>;
  /** SVC_UPLOAD_SPOOL_DIR, SVC_UPLOAD_SPOOL_ABOVE_BYTES. */
  uploads: SpoolSettings;
  /** SVC_SETTLE_DURABILITY with its DATABASE_URL: where a call's usage event must be before its answer ends. */
  settle: { durability: 'redis' } | { durability: 'postgres'; databaseUrl: string };
  /** The environment, for the parts that read settings of their own (the console). */
  env: Env;
}

export interface StandaloneOptions extends CommonOptions {
  mode: 'standalone';
  configPath: string | undefined;
  /** SVC_KEY_PEPPER, or a random one for this process (memory store only). */
  pepper: string;
  redis: RedisStoreOptions | undefined;
  redisPrefix: string;
  databaseUrl: string | undefined;
  /** The SLA job (billing/sla/sla-job.ts) for tests: its timer, clock and status history (default: the process's). */
  sla?: { intervalMs?: number; settleMs?: number; now?: () => number; history?: Pick<History, 'segments'> };
}

export interface ClusterOptions extends CommonOptions {
  mode: 'cluster';
  pepper: string;
  redis: RedisStoreOptions;
  keyring: Keyring | null;
  pollMs: number;
}

export const CLUSTER_NEEDS =
  'Cluster mode needs REDIS_URL (the Redis the operator writes to) and SVC_KEY_PEPPER ' + '(the same secret the operator hashes keys with).';

export interface Args {
  cluster?: boolean;
  config?: string;
  port?: string;
}

function portOf(args: Args, env: Env): number {
  const v = args.port ?? env.PORT;
  if (v === undefined || v === '') return 8080;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`The port (--port or PORT) must be 0-65535, got ${JSON.stringify(v)}`);
  return n;
}

function cacheAccountBytes(env: Env): number {
  const v = env.SVC_CACHE_ACCOUNT_MAX_BYTES;
  if (v === undefined || v === '') return DEFAULT_CACHE_ACCOUNT_BYTES;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`SVC_CACHE_ACCOUNT_MAX_BYTES must be a whole number of bytes >= 0, got ${JSON.stringify(v)}`);
  return n;
}

function wholeSetting(env: Env, name: string, dflt: number, min: number): number {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function responsesOf(env: Env): CommonOptions['responses'] {
  return {
    retentionMs: wholeSetting(env, 'SVC_RESPONSES_RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 1) * DAY_MS,
    accountBytes: wholeSetting(env, 'SVC_RESPONSES_ACCOUNT_MAX_BYTES', DEFAULT_ACCOUNT_BYTES, 0),
    databaseUrl: env.DATABASE_URL || undefined,
  };
}

function keyCacheSize(env: Env): number {
  const v = env.SVC_KEY_CACHE_SIZE;
  if (v === undefined || v === '') return DEFAULT_KEY_CACHE_SIZE;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`SVC_KEY_CACHE_SIZE must be a whole number of keys >= 0, got ${JSON.stringify(v)}`);
  return n;
}

function batchSettings(env: Env): Partial<BatchSettings> {
  return {
    maxUploadBytes: wholeSetting(env, 'SVC_FILES_MAX_BYTES', DEFAULT_BATCH_SETTINGS.maxUploadBytes, 1),
    fileRetentionSec: wholeSetting(env, 'SVC_FILES_RETENTION_DAYS', 30, 1) * 86_400,
    pollMs: wholeSetting(env, 'SVC_BATCH_POLL_SECONDS', 5, 1) * 1000,
  };
}

function pollMs(env: Env): number {
  const v = env.SVC_CONFIG_POLL_MS;
  if (v === undefined || v === '') return 3000;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 100) throw new Error(`SVC_CONFIG_POLL_MS must be an integer >= 100, got ${JSON.stringify(v)}`);
  return n;
}

function settleOf(env: Env): CommonOptions['settle'] {
  const v = env.SVC_SETTLE_DURABILITY || 'redis';
  if (!SETTLE_DURABILITIES.includes(v as SettleDurability)) {
    throw new Error(`SVC_SETTLE_DURABILITY must be one of ${SETTLE_DURABILITIES.join(', ')}, got ${JSON.stringify(v)}`);
  }
  if (v === 'redis') return { durability: 'redis' };
  if (!env.DATABASE_URL) throw new Error('SVC_SETTLE_DURABILITY=postgres needs DATABASE_URL (the Postgres the usage exporter writes to).');
  return { durability: 'postgres', databaseUrl: env.DATABASE_URL };
}

function common(args: Args, env: Env): CommonOptions {
  return {
    port: portOf(args, env),
    host: listenHost(env),
    drainMs: drainSeconds(env) * 1000,
    metrics: metricsListen(env),
    timeouts: timeoutsFromEnv(env),
    trustProxy: trustProxyFromEnv(env),
    logLevel: env.LOG_LEVEL || 'info',
    cacheAccountBytes: cacheAccountBytes(env),
    keyCacheSize: keyCacheSize(env),
    mcp: mcpSettingsFromEnv(env),
    batches: batchSettings(env),
    uploads: {
      parent: env.SVC_UPLOAD_SPOOL_DIR || undefined,
      aboveBytes: wholeSetting(env, 'SVC_UPLOAD_SPOOL_ABOVE_BYTES', DEFAULT_SPOOL_ABOVE_BYTES, 0),
    },
    settle: settleOf(env),
    responses: responsesOf(env),
    env,
  };
}

/** Every setting of one gateway process; throws an Error naming the first bad one. */
export function gatewayOptions(args: Args, env: Env): StandaloneOptions | ClusterOptions {
  const base = common(args, env);
  const url = env.REDIS_URL || undefined;
  if (args.cluster) {
    if (!url || !env.SVC_KEY_PEPPER) throw new Error(CLUSTER_NEEDS);
    return { ...base, mode: 'cluster', pepper: env.SVC_KEY_PEPPER, redis: redisOptionsFromEnv(url, env), keyring: keyringFromEnv(env), pollMs: pollMs(env) };
  }
  if (url && !env.SVC_KEY_PEPPER) throw new Error(PEPPER_REQUIRED);
  return {
    ...base,
    mode: 'standalone',
    configPath: args.config ?? env.SVC_CONFIG,
    pepper: env.SVC_KEY_PEPPER || randomBytes(32).toString('hex'),
    redis: url ? redisOptionsFromEnv(url, env) : undefined,
    redisPrefix: env.SVC_REDIS_PREFIX || 'svc',
    databaseUrl: env.DATABASE_URL || undefined,
  };
}
