// svc-gateway: the gateway's command line (npm start = standalone, npm run gateway = cluster mode).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, DEMO_CONFIG, loadStandaloneConfig } from './config/standalone.ts';
import { build } from './server.ts';
import { MemoryStore } from './state/memory-store.ts';
import { MemoryUsageSink } from './usage/event.ts';

const HELP = `svc-gateway: OpenAI- and Anthropic-compatible AI gateway

Usage:
  node gateway/main.ts [--config PATH] [--port N]     standalone (npm start)
  node gateway/main.ts --cluster                        cluster mode: config and state from REDIS_URL (npm run gateway)

Options:
  --config PATH   manifests: a YAML file with several documents, or a folder (default: $SVC_CONFIG, else the demo)
  --port N        listen port (default: $PORT, else 8080)
  --cluster       read config and keys from Redis, as written by the operator
  -h, --help      this help

Environment:
  PORT            listen port (8080)             HOST        listen address (0.0.0.0)
  SVC_CONFIG      manifests for standalone mode  LOG_LEVEL   fatal|error|warn|info|debug (info)
  SVC_KEY_PEPPER  secret used to hash API keys (standalone default: random per process)
  REDIS_URL       shared state for several gateway processes
  DATABASE_URL    Postgres for usage events

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
  if (values.cluster) {
    process.stderr.write('Cluster mode needs the operator and Redis store, which this build does not include yet.\n');
    process.exitCode = 2;
    return;
  }
  const pepper = process.env.SVC_KEY_PEPPER || randomBytes(32).toString('hex');
  const configPath = values.config ?? process.env.SVC_CONFIG;
  let config;
  try {
    config = loadStandaloneConfig(configPath, pepper);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
  const sink = new MemoryUsageSink();
  const store = new MemoryStore(sink);
  await store.applyConfig(config.snapshot, config.keys);
  const snapshot = config.snapshot;
  const { app } = await build({ config: { current: () => snapshot }, store, pepper });
  for (const w of config.warnings) app.log.warn({ source: w.source, object: w.object, field: w.field }, w.message);
  const port = Number(values.port ?? process.env.PORT ?? 8080);
  const address = await app.listen({ port, host: process.env.HOST ?? '0.0.0.0' });
  printKeys(config.generated, address.replace('0.0.0.0', '127.0.0.1'));
  const stop = (): void => {
    app.log.info('Stopping: draining in-flight requests');
    void app.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

function printKeys(generated: Array<{ apiKey: string; account: string; key: string }>, url: string): void {
  if (generated.length === 0) return;
  const lines = [
    '',
    `svc-gateway listening on ${url}`,
    'API keys generated for this run (shown once; they change at every start):',
    ...generated.map((g) => `  ${g.apiKey.padEnd(20)} account ${g.account.padEnd(12)} ${g.key}`),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
