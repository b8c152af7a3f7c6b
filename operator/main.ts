// svc-gateway operator: reconciles Plans, Accounts, ApiKeys and ModelRoutes of one namespace into Redis.
import { parseArgs } from 'node:util';
import { createLogger, parseLevel } from './log.ts';
import { operatorOptions } from './options.ts';
import { startOperator } from './operator.ts';

const HELP = `svc-gateway operator: Plans, Accounts, ApiKeys and ModelRoutes of one namespace, compiled into Redis for
every gateway replica (npm run operator)

Usage:
  npm run operator                run (settings from the environment)
  npm run operator -- --help      this help
  (in a checkout after npm ci; the image runs node operator/main.ts)

Environment:
  KUBECONFIG        kubeconfig file (default: ~/.kube/config, else the in-cluster service account)
  WATCH_NAMESPACE   the one namespace this installation serves (default: the Pod's own namespace in a cluster);
                    all object references (planRef, accountRef, Secrets) are names in that namespace
  REDIS_URL         the Redis the gateways read (required)
  SVC_KEY_PEPPER    secret used to hash API keys; the gateways must use the same one (required)
  SVC_REDIS_PREFIX  prefix of every Redis key (svc)
  POD_NAME          identity in leader election (default: hostname-pid)
  PORT              port of /healthz, /readyz and /metrics (8080)
  HOST              its listen address (127.0.0.1; the image and the Helm chart set 0.0.0.0)
  LOG_LEVEL         error|warn|info|debug (info)
  SVC_LEASE_NAME               name of the coordination.k8s.io/v1 Lease (svc-gateway-operator)
  SVC_LEASE_DURATION_MS        a lease not renewed for this long may be taken over (15000)
  SVC_LEASE_RENEW_DEADLINE_MS  the leader exits if it could not renew for this long (10000)
  SVC_LEASE_RETRY_PERIOD_MS    time between attempts to acquire or renew (2000)
  SVC_RESYNC_SECONDS           everything is reconciled again this often (300)
  SVC_SPEND_STATUS_SECONDS     the leader reads every account's ledger this often and writes month spend, budget
                               used and balance into the Accounts' and ApiKeys' status when a figure changed (60)
  SVC_OFFBOARD_CHECK_SECONDS   the leader asks this often whether the owners of self-service keys of Accounts with
                               selfService.revokeOnOffboard still have a right on them, and revokes the keys of those
                               who have none (300)

Only the replica holding the Lease writes; if it cannot renew within the deadline it exits, and another replica
takes over once the lease has expired. RBAC: operator/rbac/role.yaml.`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  let opts;
  let log;
  try {
    opts = operatorOptions(process.env);
    log = createLogger(parseLevel(opts.logLevel));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const logger = log;
  const operator = await startOperator(opts, logger, (reason) => {
    logger.error('Lost leadership; exiting so that only one replica writes', { reason });
    process.exit(1);
  }).catch((err: unknown) => {
    logger.error('Failed to start', { error: err });
    process.exit(1);
  });
  const stop = (signal: string): void => {
    logger.info('Stopping', { signal });
    void operator.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

await main();
