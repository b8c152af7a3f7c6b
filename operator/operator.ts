// The operator process: probes from the start, then leader election; the elected replica starts the informers
// and controllers. Losing the lease ends the process (the caller exits), so a replica that may no longer be the
// leader never writes again.
import type { KubeConfig } from '@kubernetes/client-node';
import { keyringFromEnv } from '../gateway/contract/sealed-credentials.ts';
import { redisConnectionFromEnv } from '../gateway/state/redis-connect.ts';
import { connectOperatorState } from '../gateway/state/operator-state.ts';
import { ledgerMoney } from '../gateway/usage/ledger-money.ts';
import { CR_KINDS, customWatch, loadKubeConfig, makeClients, secretWatch, type Clients } from './kube/clients.ts';
import { EventRecorder } from './kube/events.ts';
import { ResilientInformer } from './kube/informer.ts';
import { LeaderElector } from './leader/leader-elector.ts';
import type { Logger } from './log.ts';
import { OperatorMetrics } from './metrics.ts';
import type { OperatorOptions } from './options.ts';
import type { Caches } from './controllers/context.ts';
import { compiled } from './controllers/compiled.ts';
import { expiringByAccount } from './controllers/key-expiry.ts';
import { ControllerManager } from './controllers/manager.ts';
import { DriftEvents } from './controllers/drift-events.ts';
import { Offboarding } from './controllers/offboarding.ts';
import { SpendStatus } from './controllers/spend-status.ts';
import { startProbes, type ProbeServer } from './http/probes.ts';
import { startProber, type OperatorProber } from './availability.ts';

export interface RunningOperator {
  probes: ProbeServer;
  stop(): Promise<void>;
}

function makeCaches(kc: KubeConfig, clients: Clients, log: Logger, metrics: OperatorMetrics): Caches {
  const opts = { log, onRestart: (kind: string) => metrics.watchRestarts.inc({ kind }) };
  const caches: Partial<Caches> = { Secret: new ResilientInformer(kc, secretWatch(clients), opts) };
  for (const kind of CR_KINDS) caches[kind] = new ResilientInformer(kc, customWatch(clients, kind), opts);
  return caches as Caches;
}

export async function startOperator(opts: OperatorOptions, log: Logger, onLostLeadership: (reason: string) => void): Promise<RunningOperator> {
  const kc = loadKubeConfig();
  const clients = makeClients(kc, opts.namespace);
  // With DATABASE_URL the leader rebuilds a Redis that lost its data from the Postgres ledger before it publishes.
  const databaseUrl = process.env.DATABASE_URL;
  const ledger = databaseUrl ? ledgerMoney(databaseUrl, (err) => log.warn('Postgres connection lost; reconnecting', { error: err.message })) : null;
  if (!ledger) log.warn('No DATABASE_URL: balances and applied credits live only in Redis and cannot be rebuilt if it loses its data');
  const store = await connectOperatorState(
    {
      ...redisConnectionFromEnv(opts.redisUrl, process.env),
      prefix: opts.redisPrefix,
      // Upstream credentials are sealed in every snapshot written to Redis (SVC_CONFIG_KEY, else derived from the pepper).
      keyring: keyringFromEnv({ ...process.env, SVC_KEY_PEPPER: opts.pepper }),
      onWarning: (m, e) => log.warn(m, { error: e }),
    },
    {
      ledger,
      log: { info: (f, m) => log.info(m, f), warn: (f, m) => log.warn(m, f), error: (f, m) => log.error(m, f) },
    },
  );
  const metrics = new OperatorMetrics();
  const ctx = {
    clients,
    store,
    log,
    pepper: opts.pepper,
    now: () => new Date(),
    caches: makeCaches(kc, clients, log, metrics),
    events: new EventRecorder(clients, opts.identity, log),
  };
  const manager = new ControllerManager(ctx, metrics, opts.resyncMs);
  // Spend, budget used and balance in status: read from the ledger on a cadence by the leader, never per call.
  const spend = new SpendStatus(ctx, metrics, opts.spendStatusMs);
  manager.onPublished(() => spend.soon());
  // The drift the exporter's reconciliation found, as Events on the Accounts (the exporter has no Kubernetes access).
  const drift = new DriftEvents(ctx);
  // Accounts with selfService.revokeOnOffboard: the keys of people with no right left are revoked.
  const offboarding = new Offboarding(ctx, metrics, opts.offboardCheckMs);
  metrics.watchKeyExpiry(() => {
    if (!manager.synced) return [];
    const c = compiled(ctx);
    return expiringByAccount(c.keys, Object.keys(c.snapshot.accounts), Date.now());
  });
  let leading = false;
  // Availability probes run on the leader only: two operators make one set of probes.
  let prober: OperatorProber | null = null;
  const elector = new LeaderElector({
    ...opts,
    api: clients.coordination,
    namespace: opts.namespace,
    name: opts.leaseName,
    identity: opts.identity,
    log,
    onStartedLeading: () => {
      leading = true;
      metrics.leader.set(1);
      manager
        .start()
        .then(async () => {
          spend.start();
          drift.start();
          offboarding.start();
          prober = await startProber(ctx, store.prefix, process.env);
        })
        .catch((err: unknown) => onLostLeadership(`controllers failed to start: ${String(err)}`));
    },
    onStoppedLeading: (reason) => {
      metrics.leader.set(0);
      onLostLeadership(reason);
    },
  });
  metrics.leader.set(0);
  const probes = await startProbes(opts.port, { healthy: () => true, ready: () => !leading || manager.synced }, metrics.registry);
  void elector.run();
  log.info('Started operator', { namespace: opts.namespace, identity: opts.identity, lease: opts.leaseName, port: probes.port });
  return {
    probes,
    stop: async () => {
      await prober?.stop();
      await spend.stop();
      await drift.stop();
      await offboarding.stop();
      if (leading) await manager.stop();
      await elector.release();
      metrics.leader.set(0);
      await store.close();
      await ledger?.close();
      await probes.close();
    },
  };
}
