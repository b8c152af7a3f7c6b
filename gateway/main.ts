// svc-gateway: the gateway's command line (npm start = standalone, npm run gateway = cluster mode). Settings are
// parsed once (options.ts); each mode starts in a module of its own.
import { parseArgs } from 'node:util';
import { startCluster } from './cluster-mode.ts';
import { endLogs } from './logger.ts';
import { gatewayOptions, HELP } from './options.ts';
import { startStandalone, type Standalone } from './standalone-mode.ts';

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
  let stop: () => Promise<void>;
  let logger: Parameters<typeof endLogs>[0];
  try {
    const opts = gatewayOptions(values, process.env);
    if (opts.mode === 'cluster') {
      const gw = await startCluster(opts);
      process.stdout.write(`svc-gateway listening on ${gw.address.replace('0.0.0.0', '127.0.0.1')} (cluster mode)\n`);
      process.stdout.write(`svc-gateway metrics on ${gw.metricsUrl}/metrics\n`);
      stop = gw.stop;
      logger = gw.logger;
    } else {
      const gw = await startStandalone(opts);
      printStart(gw);
      stop = gw.stop;
      logger = gw.logger;
    }
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  // The logs last, bounded: a stdout nobody reads (or a closed pipe) must not keep the process from exiting.
  const onSignal = (): void => {
    void stop()
      .then(() => endLogs(logger))
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

function printStart(gw: Standalone): void {
  const consoleLines =
    gw.consoleToken === null
      ? [`Console: ${gw.url}/dashboard/login (admin token from SVC_CONSOLE_TOKEN)`]
      : [`Console: ${gw.url}/dashboard/login`, `  ${'console'.padEnd(20)} admin token          ${gw.consoleToken}`];
  const lines = [
    '',
    `svc-gateway listening on ${gw.url}`,
    `svc-gateway metrics on ${gw.metricsUrl}/metrics`,
    ...(gw.generated.length === 0
      ? []
      : [
          'API keys generated for this run (shown once; they change at every start):',
          ...gw.generated.map((g) => `  ${g.apiKey.padEnd(20)} account ${g.account.padEnd(12)} ${g.key}`),
        ]),
    ...consoleLines,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
