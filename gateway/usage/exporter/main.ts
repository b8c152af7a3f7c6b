// svc-usage-exporter: usage events from the gateways' Redis Streams into Postgres (run by the operator's deployment).
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { collectProcessMetrics } from '../../lifecycle/process-metrics.ts';
import { migrate } from '../postgres/migrate.ts';
import { createPool, redactDatabaseUrl } from '../postgres/pool.ts';
import { serveMetrics } from '../../http/metrics-server.ts';
import { listenHost } from '../../lifecycle/listen-host.ts';
import { jsonLog } from './log.ts';
import { startExporter } from './start.ts';

const HELP = `svc-usage-exporter: usage events from Redis Streams into Postgres, exactly once per event

Usage:
  npm run exporter -- [options]
  (in a checkout after npm ci; the image runs node gateway/usage/exporter/main.ts [options])

Any number of replicas may run: they share one consumer group, commit each batch to Postgres before
acknowledging it, take over the entries of a replica that died, and trim the streams only below what
every replica has committed. The schema is migrated at start (under an advisory lock).

Options:
  --batch-size N      entries per Postgres transaction (500)
  --poll-ms N         wait between reads when the streams are empty (200)
  --claim-idle-ms N   take over entries pending this long on another replica (30000)
  --max-deliveries N  park an entry delivered more often than this as a dead letter (10)
  --migrate-only      apply the schema migrations and exit
  -h, --help          this help

Environment:
  REDIS_URL          the gateways' Redis (required)
  DATABASE_URL       Postgres to write usage_events, usage_daily, ledger_credits, usage_dead_letters (required)
  SVC_REDIS_PREFIX   prefix of the gateways' Redis keys (svc)
  SVC_RECONCILE_SECONDS  how often each account's money in Redis is checked against the ledger (60; 0 = never)
  PORT               HTTP port for /metrics, /healthz, /readyz (9464)
  HOST               listen address (127.0.0.1; the image and the Helm chart set 0.0.0.0)
  LOG_LEVEL          info|warn|error (info)`;

const int = (v: string | undefined, name: string): number | undefined => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got ${JSON.stringify(v)}`);
  return n;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean', short: 'h' },
      'batch-size': { type: 'string' },
      'poll-ms': { type: 'string' },
      'claim-idle-ms': { type: 'string' },
      'max-deliveries': { type: 'string' },
      'migrate-only': { type: 'boolean' },
    },
  });
  if (values.help) return void process.stdout.write(`${HELP}\n`);
  const log = jsonLog(process.env.LOG_LEVEL === 'warn' || process.env.LOG_LEVEL === 'error' ? process.env.LOG_LEVEL : 'info');
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!databaseUrl || (!redisUrl && !values['migrate-only'])) return fail('REDIS_URL and DATABASE_URL must both be set (see --help).');
  if (values['migrate-only']) {
    const pool = createPool(databaseUrl);
    try {
      const applied = await migrate(pool);
      process.stdout.write(applied.length ? `Applied migrations: ${applied.join(', ')}\n` : 'Schema is up to date.\n');
    } finally {
      await pool.end();
    }
    return;
  }
  const registry = new Registry();
  collectProcessMetrics(registry);
  let running: Awaited<ReturnType<typeof startExporter>>;
  try {
    running = await startExporter({
      redisUrl: redisUrl as string,
      databaseUrl,
      registry,
      log,
      prefix: process.env.SVC_REDIS_PREFIX || 'svc',
      batchSize: int(values['batch-size'], '--batch-size'),
      pollMs: int(values['poll-ms'], '--poll-ms'),
      claimIdleMs: int(values['claim-idle-ms'], '--claim-idle-ms'),
      maxDeliveries: int(values['max-deliveries'], '--max-deliveries'),
    });
  } catch (err) {
    return fail(`Cannot start the usage exporter (Postgres ${redactDatabaseUrl(databaseUrl)}): ${err instanceof Error ? err.message : String(err)}`);
  }
  const host = listenHost(process.env);
  const http = await serveMetrics(registry, int(process.env.PORT, 'PORT') ?? 9464, host, () => true);
  process.stdout.write(`svc-usage-exporter listening on http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${http.port} (consumer ${running.consumer})\n`);
  const stop = (): void => {
    log.info({}, 'Stopping: finishing the batch in hand');
    void running
      .stop()
      .then(() => http.server.close())
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

function fail(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 1;
}

await main();
