// Cost curve: the operator with many objects present, on a real API server (kube-apiserver + etcd, as the operator
// tests start them) and one Redis: with 100, 10,000 and 50,000 ApiKeys and 2,000 ModelRoutes created before it
// starts, how long its full resync takes (its start until every ApiKey is Ready), its memory then, and the time from
// `kubectl apply` of one more ApiKey until a gateway serves that key. One fresh namespace per point.
import { inParallel } from '../../gateway/state/parallel.ts';
import { chat } from '../helpers/fleet.ts';
import { gatewayReady, install, startCluster, type Installation } from '../operator/harness.ts';
import { secretKey, waitFor, type AdminApi } from '../operator/kube-api.ts';
import { memoryCgroup } from './cgroup.ts';
import { rssBytes } from './procs.ts';
import { f1, load, n, pointsOf, table, type Bounds } from './scale-common.ts';

export const APIKEY_POINTS = [100, 10_000, 50_000];
export const QUICK_APIKEY_POINTS = [100, 1_000];
const ROUTES = 2_000;
/** The longest a full resync is waited for (the 50,000-key point takes over an hour on a slow 2-CPU machine). */
const RESYNC_LIMIT_MS = 7_200_000;
/**
 * How often the curve counts Ready ApiKeys: each count lists every ApiKey, which at 50,000 keys is well over 100 MB of
 * JSON for the API server to write, so the larger points look less often (1 ms a key: 50 s at 50,000) and the
 * measure does not slow what it measures. The resync time is known to within this interval.
 */
const countEveryMs = (keys: number): number => Math.max(250, Math.min(60_000, keys));
const QUICK_ROUTES = 200;
const GROUP = { group: 'gateway.svc.dev', version: 'v1alpha1' };
const API = 'gateway.svc.dev/v1alpha1';

async function create(api: AdminApi, ns: string, plural: string, body: object): Promise<void> {
  await api.custom.createNamespacedCustomObject({ ...GROUP, namespace: ns, plural, body });
}

/** ApiKeys whose Ready condition is True, read in pages (50,000 objects in one answer would be tens of MB). */
async function readyKeys(api: AdminApi, ns: string): Promise<number> {
  let count = 0;
  let cont: string | undefined;
  do {
    const page = (await api.custom.listNamespacedCustomObject({ ...GROUP, namespace: ns, plural: 'apikeys', limit: 5000, _continue: cont })) as {
      items: Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>;
      metadata?: { continue?: string };
    };
    count += page.items.filter((o) => o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return count;
}

async function point(
  inst: Installation,
  api: AdminApi,
  keys: number,
  routes: number,
  memoryBytes: number | undefined,
  log: (l: string) => void,
): Promise<string[]> {
  const ns = inst.ns;
  await create(api, ns, 'plans', { apiVersion: API, kind: 'Plan', metadata: { name: 'p' }, spec: { tier: 1 } });
  await create(api, ns, 'accounts', {
    apiVersion: API,
    kind: 'Account',
    metadata: { name: 'acme' },
    spec: { planRef: 'p', credits: [{ id: 'c', amountUsd: 100 }] },
  });
  const t0 = Date.now();
  await inParallel(
    Array.from({ length: routes }, (_, i) => i),
    16,
    (i) =>
      create(api, ns, 'modelroutes', {
        apiVersion: API,
        kind: 'ModelRoute',
        metadata: { name: `route-${i}` },
        spec: { pricing: { inputPerMTokUsd: 1 }, targets: [{ name: 'mock-0', provider: 'mock' }], probe: { intervalSeconds: 86400 } },
      }),
  );
  await inParallel(
    Array.from({ length: keys }, (_, i) => i),
    16,
    (i) => create(api, ns, 'apikeys', { apiVersion: API, kind: 'ApiKey', metadata: { name: `key-${i}` }, spec: { accountRef: 'acme' } }),
  );
  log(`operator: ${n(keys)} ApiKeys and ${n(routes)} ModelRoutes created in ${((Date.now() - t0) / 1000).toFixed(0)} s; starting the operator...`);
  const started = Date.now();
  // One operator, nobody to fail over to: a leader lease that outlasts a starved API server (on a loaded machine the
  // default 10 s renew deadline ends the process before the resync it is measuring does).
  // Info logging: the harness knows the operator started by its "Started operator" line.
  // --operator-memory: in a memory cgroup of that size, as a pod's limit would hold it.
  const cgroup = memoryBytes === undefined ? undefined : memoryCgroup(`svc-bench-operator-${process.pid}`, memoryBytes);
  const op = await inst.startOperator(
    'op-0',
    {
      SVC_LEASE_DURATION_MS: '120000',
      SVC_LEASE_RENEW_DEADLINE_MS: '90000',
      SVC_LEASE_RETRY_PERIOD_MS: '5000',
      // As the chart sets it for a memory limit (its "svc-gateway.heapEnv"): V8's heap at 60% of the limit.
      ...(memoryBytes === undefined ? {} : { NODE_OPTIONS: `--max-old-space-size=${Math.floor(((memoryBytes / 2 ** 20) * 3) / 5)}` }),
    },
    { cgroupProcs: cgroup?.procsFile },
  );
  // An operator that dies (killed for memory in its cgroup) ends the point at once, saying so.
  const died = op.exited.then((code) => {
    const kills = cgroup ? `; killed for memory ${cgroup.oomKills()} time(s) in its ${n(cgroup.limitBytes / 2 ** 20)} MiB cgroup` : '';
    throw new Error(`the operator exited (${code}) with ${n(ready)} of ${n(keys)} ApiKeys Ready after ${((Date.now() - started) / 1000).toFixed(0)} s${kills}`);
  });
  // The count read last is logged about each minute and named in the failure (a partial figure: keys Ready per minute).
  let ready = 0;
  let logged = Date.now();
  const resync = async (): Promise<boolean> => {
    ready = await readyKeys(api, ns);
    if (Date.now() - logged >= 45_000) {
      logged = Date.now();
      log(`operator: ${n(ready)} of ${n(keys)} ApiKeys Ready after ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    return ready >= keys;
  };
  const all = waitFor('every ApiKey Ready (full resync)', resync, RESYNC_LIMIT_MS, countEveryMs(keys)).catch((err: unknown) => {
    throw new Error(`${n(ready)} of ${n(keys)} ApiKeys Ready after ${RESYNC_LIMIT_MS / 1000} s: ${err instanceof Error ? err.message : String(err)}`);
  });
  died.catch(() => {}); // it rejects when the operator is stopped at the end
  /** Until the point ends, an operator that dies ends it. */
  const whileAlive = <T>(p: Promise<T>): Promise<T> => Promise.race([p, died]);
  await whileAlive(all);
  const resyncS = (Date.now() - started) / 1000;
  const opMb = rssBytes(op.child.pid as number) / 2 ** 20;
  // What V8 holds in use then (live objects and garbage not yet collected): far below the RSS when nothing limits the heap.
  const opHeapMb = (await op.metric('nodejs_heap_size_used_bytes').catch(() => Number.NaN)) / 2 ** 20;
  const peak = cgroup ? `${f1(cgroup.peakBytes() / 2 ** 20)} of ${n(cgroup.limitBytes / 2 ** 20)}` : '-';
  log(`operator: resync took ${resyncS.toFixed(1)} s; a gateway, then one more ApiKey...`);
  const gw = await inst.startGateway();
  await whileAlive(gatewayReady(gw, 300_000, () => op.output().slice(-4000)));
  const gwMb = rssBytes(gw.child.pid as number) / 2 ** 20;
  const a0 = Date.now();
  await inst.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: API, kind: 'ApiKey', metadata: { name: 'late' }, spec: { accountRef: 'acme' } }));
  const key = await whileAlive(waitFor('the late key', () => secretKey(api, ns, 'late-key'), 600_000, 10));
  await whileAlive(waitFor('the late key served', async () => (await chat(gw.url, key, { model: 'route-0' })).status === 200, 600_000, 10));
  const servedMs = Date.now() - a0;
  if (cgroup) {
    await op.kill(); // leaves the cgroup empty, so it can go
    cgroup.remove();
  }
  return [n(keys), n(routes), f1(resyncS), f1(opMb), String(servedMs), f1(gwMb), f1(opHeapMb), peak];
}

export async function operatorCurve(b: Bounds, log: (l: string) => void): Promise<string> {
  const before = load();
  const routes = b.quick ? QUICK_ROUTES : ROUTES;
  const rows: string[][] = [];
  const cluster = await startCluster('scale');
  try {
    // --max N caps the ApiKeys as it caps the keys curve (a 50,000-key point takes a long while on a loaded machine).
    for (const keys of pointsOf(b.quick ? QUICK_APIKEY_POINTS : APIKEY_POINTS, b, b.maxKeys, b.minKeys)) {
      const inst = await install(cluster, `scale-${keys}`);
      try {
        rows.push(await point(inst, cluster.api, keys, routes, b.operatorMemoryBytes, log));
      } finally {
        await inst.stop();
      }
    }
  } finally {
    await cluster.stop();
  }
  return table(
    'The operator against the number of ApiKeys',
    before,
    [
      'ApiKeys',
      'ModelRoutes',
      'full resync: start to every ApiKey Ready (s)',
      'operator RSS then (MB)',
      'kubectl apply to served (ms)',
      'gateway RSS (MB)',
      'operator heap in use then (MB)',
      'operator peak in its memory cgroup (MiB of MiB)',
    ],
    rows,
    [
      b.quick
        ? `Quick: ${n(QUICK_ROUTES)} ModelRoutes and up to ${n(QUICK_APIKEY_POINTS[1] as number)} ApiKeys.`
        : 'One fresh namespace and operator per row, on one API server.',
    ],
  );
}
