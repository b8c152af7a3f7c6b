// svc-gateway: the gateway's command line (npm start = standalone, npm run gateway = cluster mode).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { startClusterGateway } from './config/cluster-mode.ts';
import { ConfigError, DEMO_CONFIG, loadStandaloneConfig } from './config/standalone.ts';
import { build } from './server.ts';
import { MemoryStore } from './state/memory-store.ts';
import { PEPPER_REQUIRED, redactUrl, redisOptionsFromEnv, sharedKeys } from './state/redis-env.ts';
import { RedisStore } from './state/redis-store.ts';
import type { Store } from './state/store.ts';
import { Metrics } from './http/metrics.ts';
import { Drain, drainSeconds } from './lifecycle/drain.ts';
import { metricsListen, serveGatewayMetrics } from './http/metrics-server.ts';
import { forwardingLog } from './usage/exporter/log.ts';
import { standaloneUsage } from './usage/standalone.ts';
import { MemoryLastUsed, RedisLastUsed, withLastUsed, type LastUsed } from './state/last-used.ts';
import { mountStandaloneConsole, type StandaloneConsoleOptions } from '../console/standalone.ts';

const HELP = `svc-gateway: OpenAI- and Anthropic-compatible AI gateway

Usage:
  node gateway/main.ts [--config PATH] [--port N]     standalone (npm start)
  node gateway/main.ts --cluster                        cluster mode: config and state from REDIS_URL (npm run gateway)

Options:
  --config PATH   manifests: a YAML file with several documents, or a folder (default: $SVC_CONFIG, else the demo)
  --port N        listen port of the API (default: $PORT, else 8080); metrics are on SVC_METRICS_PORT
  --cluster       read config and keys from Redis, as written by the operator (REDIS_URL and SVC_KEY_PEPPER required);
                  not ready (/readyz 503) until the operator has published a config
  -h, --help      this help

Environment:
  PORT            listen port (8080)             HOST        listen address (0.0.0.0)
  SVC_METRICS_PORT  port of /metrics (Prometheus), /healthz and /readyz, kept off the API port because the metrics
                    list every account's balance (9090; 0 = any free port). Keep it inside the cluster.
  SVC_METRICS_HOST  listen address of that port (default: HOST)
  SVC_CONFIG      manifests for standalone mode  LOG_LEVEL   fatal|error|warn|info|debug (info)
  SVC_KEY_PEPPER  secret used to hash API keys (standalone default: random per process; required with REDIS_URL)
  REDIS_URL       shared state for several gateway processes: limits, holds, balances, usage stream.
                  Each process publishes its manifests there (idempotent; credits applied once by id).
  SVC_REDIS_TIMEOUT_MS   longest wait for one Redis command; past it the call gets 503 (1000)
  SVC_HOLD_TTL_SECONDS   holds never settled (crashed process) are released after this (900)
  SVC_REDIS_PREFIX       prefix of every Redis key (svc)
  DATABASE_URL    Postgres for usage events (migrated at start); with REDIS_URL this process also runs the usage exporter
  SVC_CONSOLE_TOKEN      admin token of the console at /dashboard (at least 16 characters; default: generated, printed)
  SVC_CONSOLE_STATE      without REDIS_URL: a JSON file where the console keeps the keys it made (as HMACs) and
                         pending revocations across restarts (needs a fixed SVC_KEY_PEPPER); default: memory only
  SVC_CONFIG_POLL_MS     cluster mode: how often to look for a new config besides pub/sub announcements (3000)
  SVC_DRAIN_SECONDS      on SIGTERM: /readyz turns 503 and no new connection is accepted; calls in flight may
                         finish for this long, then end (a stream with an error event); holds are settled and
                         usage flushed before exit (30)

The demo config (${DEMO_CONFIG}) serves the built-in mock provider offline;
the keys it generates are printed once at start.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', short: 'h' },
      cluster: { type: 'boolean' },
      config: { type: 'string' },
      port: { type: 'string' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (values.cluster) return runCluster(Number(values.port ?? process.env.PORT ?? 8080));
  const redisUrl = process.env.REDIS_URL || undefined;
  if (redisUrl && !process.env.SVC_KEY_PEPPER) return fail(PEPPER_REQUIRED);
  const pepper = process.env.SVC_KEY_PEPPER || randomBytes(32).toString('hex');
  let drainMs: number;
  try {
    drainMs = drainSeconds(process.env) * 1000;
    metricsListen(process.env);
  } catch (err) {
    return fail((err as Error).message);
  }
  const configPath = values.config ?? process.env.SVC_CONFIG;
  let config;
  try {
    config = loadStandaloneConfig(configPath, pepper);
  } catch (err) {
    if (err instanceof ConfigError) return fail(err.message);
    throw err;
  }
  let warn = (message: string, err?: unknown): void => void process.stderr.write(`${message}${err ? `: ${String(err)}` : ''}\n`);
  let store: Store;
  let backing: StandaloneConsoleOptions['backing'];
  let lastUsed: LastUsed;
  let configKeys = config.keys;
  let generated = config.generated;
  const metrics = new Metrics();
  const usageLog = forwardingLog();
  const usage = standaloneUsage({
    databaseUrl: process.env.DATABASE_URL || undefined, redisUrl, redisPrefix: process.env.SVC_REDIS_PREFIX || 'svc',
    registry: metrics.registry, log: usageLog, snapshot: config.snapshot,
  });
  if (redisUrl) {
    const shared = sharedKeys(config.keys, generated);
    let redis: RedisStore;
    try {
      redis = await RedisStore.connect({ ...redisOptionsFromEnv(redisUrl, process.env), onWarning: (m, e) => warn(m, e) });
    } catch (err) {
      return fail(`Cannot use Redis at ${redactUrl(redisUrl)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      await redis.applyConfig(config.snapshot, shared.keys);
    } catch (err) {
      await redis.close();
      return fail(`Cannot publish the config to Redis at ${redactUrl(redisUrl)}: ${err instanceof Error ? err.message : String(err)}`);
    }
    for (const name of shared.skipped) {
      warn(`ApiKey ${name} has no key in its Secret, so it gets none: with REDIS_URL every process must know the same key. Put one in the Secret (data key "key").`);
    }
    generated = [];
    configKeys = shared.keys;
    store = redis;
    backing = { kind: 'redis', store: redis };
    lastUsed = new RedisLastUsed(redis.redis, redis.prefix);
  } else {
    const memory = new MemoryStore(usage.sink);
    await memory.applyConfig(config.snapshot, config.keys);
    store = memory;
    backing = { kind: 'memory', store: memory, sink: usage.sink };
    lastUsed = new MemoryLastUsed();
  }
  const snapshot = config.snapshot;
  const drain = new Drain();
  const { app } = await build({ config: { current: () => snapshot }, store: withLastUsed(store, lastUsed), pepper, metrics, drain });
  warn = (message, err) => app.log.warn({ err }, message);
  let consoleToken: string | null;
  try {
    consoleToken = (await mountStandaloneConsole(app, { snapshot, configKeys, pepper, backing, lastUsed, env: process.env })).generatedToken;
  } catch (err) {
    await store.close();
    return fail(`Cannot start the console: ${err instanceof Error ? err.message : String(err)}`);
  }
  usageLog.attach(app.log);
  for (const w of config.warnings) app.log.warn({ source: w.source, object: w.object, field: w.field }, w.message);
  const port = Number(values.port ?? process.env.PORT ?? 8080);
  const address = await app.listen({ port, host: process.env.HOST ?? '0.0.0.0' });
  let metricsServer: Awaited<ReturnType<typeof serveGatewayMetrics>>;
  try {
    metricsServer = await serveGatewayMetrics(metrics.registry, process.env, () => (drain.draining ? 'draining' : true));
  } catch (err) {
    await app.close();
    await store.close();
    await usage.close();
    return fail(err instanceof Error ? err.message : String(err));
  }
  printKeys(generated, address.replace('0.0.0.0', '127.0.0.1'), consoleToken, metricsServer.url);
  const stop = (): void => {
    void drain.run(app, drainMs, app.log).then(() => store.close()).then(() => usage.close()).then(() => metricsServer.close()).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

async function runCluster(port: number): Promise<void> {
  let gw;
  try {
    gw = await startClusterGateway(process.env, port);
  } catch (err) {
    return fail(err instanceof Error ? err.message : String(err));
  }
  process.stdout.write(`svc-gateway listening on ${gw.address.replace('0.0.0.0', '127.0.0.1')} (cluster mode)\n`);
  process.stdout.write(`svc-gateway metrics on ${gw.metricsUrl}/metrics\n`);
  const stop = (): void => {
    void gw.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

function fail(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 1;
}

function printKeys(generated: Array<{ apiKey: string; account: string; key: string }>, url: string, consoleToken: string | null, metricsUrl: string): void {
  const consoleLines = consoleToken === null
    ? [`Console: ${url}/dashboard/login (admin token from SVC_CONSOLE_TOKEN)`]
    : [`Console: ${url}/dashboard/login`, `  ${'console'.padEnd(20)} admin token          ${consoleToken}`];
  const lines = [
    '',
    `svc-gateway listening on ${url}`,
    `svc-gateway metrics on ${metricsUrl}/metrics`,
    ...(generated.length === 0 ? [] : [
      'API keys generated for this run (shown once; they change at every start):',
      ...generated.map((g) => `  ${g.apiKey.padEnd(20)} account ${g.account.padEnd(12)} ${g.key}`),
    ]),
    ...consoleLines,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
