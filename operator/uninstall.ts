// What the chart's pre-delete hook runs (charts/svc-gateway/templates/uninstall-hook.yaml), before helm deletes
// anything of the release. The ApiKeys outlive the release (helm never deletes CRDs nor their objects) but their
// finalizer needs the operator: left on, deleting an ApiKey or its namespace after the uninstall waits for good.
// Keys are not revoked: revocation is irreversible, and a re-install (same pepper, same ApiKeys) serves them again.
import { parseArgs } from 'node:util';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { connectOperatorState, type OperatorState } from '../gateway/state/operator-state.ts';
import { redisConnectionFromEnv } from '../gateway/state/redis-connect.ts';
import { FINALIZER, KEY_HMAC_ANNOTATION } from './controllers/api-key-finalizer.ts';
import { crRef, loadKubeConfig, makeClients, statusOf, type Clients, type CustomObject } from './kube/clients.ts';
import { patchMetadata } from './kube/patch.ts';
import { createLogger, parseLevel, type Logger } from './log.ts';

const HELP = `svc-gateway uninstall: what helm uninstall runs before it deletes the release (the chart's pre-delete hook)

Usage:
  node operator/uninstall.ts           run (settings from the environment)
  node operator/uninstall.ts --help    this help

In order: the operator Deployment is scaled to 0 and its pods are waited for (so that nothing puts the finalizer
back); every ApiKey loses the operator's finalizer (one already being deleted has its key revoked first, as the
operator does); the key records published in Redis are removed, so that no gateway admits a key until an operator
publishes again. Keys are not revoked: a re-install serves the same ApiKeys again.

Environment:
  WATCH_NAMESPACE           the installation's namespace (required)
  SVC_OPERATOR_DEPLOYMENT   the operator's Deployment (required)
  SVC_OPERATOR_SELECTOR     label selector of the operator's pods (required)
  REDIS_URL, SVC_REDIS_PREFIX, SVC_REDIS_CLUSTER   the Redis the operator publishes to (as the operator's)
  SVC_STOP_TIMEOUT_SECONDS  longest wait for the operator's pods to go (120)
  LOG_LEVEL                 error|warn|info|debug (info)`;

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

async function stopOperator(clients: Clients, deployment: string, selector: string, timeoutMs: number, log: Logger): Promise<void> {
  const apps = clients.kc.makeApiClient(AppsV1Api);
  const core = clients.kc.makeApiClient(CoreV1Api);
  const namespace = clients.namespace;
  try {
    await apps.patchNamespacedDeploymentScale({ name: deployment, namespace, body: { spec: { replicas: 0 } } }, MERGE);
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items.map((p) => p.metadata?.name ?? '');
    if (left.length === 0) break;
    if (Date.now() > deadline) throw new Error(`The operator's pods did not stop within ${timeoutMs / 1000} s: ${left.join(', ')}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  log.info('Stopped the operator', { Deployment: `${namespace}/${deployment}` });
}

/** The HMACs an ApiKey's key is known by without its Secret (the operator notes it; a console key has it in spec). */
function hmacsOf(obj: CustomObject): string[] {
  const spec = obj.spec as { keyHash?: string } | undefined;
  return [obj.metadata?.annotations?.[KEY_HMAC_ANNOTATION], spec?.keyHash].filter((h): h is string => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h));
}

/** Takes the finalizer off one ApiKey, revoking first if it is being deleted; a concurrent write is retried. */
async function release(clients: Clients, store: OperatorState, first: CustomObject, log: Logger): Promise<boolean> {
  let obj = first;
  for (let attempt = 0; ; attempt++) {
    const finalizers = obj.metadata?.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return false;
    const name = obj.metadata?.name ?? '';
    if (obj.metadata?.deletionTimestamp) for (const h of hmacsOf(obj)) await store.revoke(h);
    try {
      await patchMetadata(clients, 'ApiKey', name, obj.metadata?.resourceVersion ?? '', { finalizers: finalizers.filter((f) => f !== FINALIZER) });
      log.debug('Released ApiKey', { ApiKey: `${clients.namespace}/${name}` });
      return true;
    } catch (err) {
      if (statusOf(err) === 404) return false;
      if (statusOf(err) !== 409 || attempt >= 5) throw err;
      obj = (await clients.custom.getNamespacedCustomObject({ ...crRef(clients, 'ApiKey'), name })) as CustomObject;
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const log = createLogger(parseLevel(process.env.LOG_LEVEL));
  try {
    const clients = makeClients(loadKubeConfig(), need('WATCH_NAMESPACE'));
    const timeoutMs = Number(process.env.SVC_STOP_TIMEOUT_SECONDS || 120) * 1000;
    await stopOperator(clients, need('SVC_OPERATOR_DEPLOYMENT'), need('SVC_OPERATOR_SELECTOR'), timeoutMs, log);
    const store = await connectOperatorState({
      ...redisConnectionFromEnv(need('REDIS_URL'), process.env),
      prefix: process.env.SVC_REDIS_PREFIX || undefined,
      onWarning: (m, e) => log.warn(m, { error: e }),
    });
    try {
      const list = (await clients.custom.listNamespacedCustomObject(crRef(clients, 'ApiKey'))) as { items: CustomObject[] };
      let released = 0;
      for (const obj of list.items) if (await release(clients, store, obj, log)) released++;
      const unpublished = await store.unpublishKeys();
      log.info('Released the ApiKeys for the uninstall', { ApiKeys: list.items.length, released, keyRecordsRemoved: unpublished });
    } finally {
      await store.close();
    }
  } catch (err) {
    log.error('Uninstall hook failed', { error: err });
    process.exitCode = 1;
  }
}

await main();
