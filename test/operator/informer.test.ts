// The informer wrapper against a real API server: a failing LIST is retried until the cache is filled (client-node
// alone would stop), events reach listeners by name, and stop() is final (its AbortError revives nothing).
import { KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResilientInformer } from '../../operator/kube/informer.ts';
import { customPage, customWatch, makeClients, pagedList, secretWatch, type CustomObject } from '../../operator/kube/clients.ts';
import { createLogger } from '../../operator/log.ts';
import { startControlPlane, type ControlPlane } from '../k8s/control-plane.ts';
import { installCrds } from '../k8s/install-crds.ts';
import { createNamespace, kubectlOk } from '../k8s/kubectl.ts';
import { waitFor } from './kube-api.ts';

let cp: ControlPlane;
let kc: KubeConfig;

beforeAll(async () => {
  cp = await startControlPlane();
  await installCrds(cp);
  kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfig);
}, 120_000);

afterAll(async () => {
  await cp?.stop();
});

const plan = (name: string, tier: number): string =>
  JSON.stringify({ apiVersion: 'gateway.svc.dev/v1alpha1', kind: 'Plan', metadata: { name }, spec: { tier } });

describe('ResilientInformer', () => {
  it('retries a failing LIST until the cache is filled, then delivers changes by name', async () => {
    const ns = await createNamespace(cp, 'inf');
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('before', 1));
    const spec = customWatch(makeClients(kc, ns), 'Plan');
    let failures = 2;
    const restarts: string[] = [];
    const lines: string[] = [];
    const informer = new ResilientInformer<CustomObject>(
      kc,
      {
        ...spec,
        list: async () => {
          if (failures-- > 0) throw Object.assign(new Error('API server unavailable'), { code: 503 });
          return spec.list();
        },
      },
      { log: createLogger('warn', {}, (l) => lines.push(l)), restartDelayMs: 20, onRestart: (k) => restarts.push(k) },
    );
    const seen: string[] = [];
    informer.onChange((name) => seen.push(name));
    await informer.start();
    expect(informer.synced).toBe(true);
    // (At least) the two failures we made; a freshly installed CRD may add a 429 of its own.
    expect(restarts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(lines.map((l) => JSON.parse(l).msg))).toEqual(new Set(['Watch failed; restarting it']));
    expect(informer.get('before')?.metadata?.name).toBe('before');

    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('after', 2));
    await waitFor('the new Plan', async () => informer.get('after') !== undefined);
    expect(seen).toEqual(['before', 'after']);

    const restartsBeforeStop = restarts.length;
    await informer.stop();
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('stopped', 3));
    await new Promise((r) => setTimeout(r, 500));
    expect(restarts).toHaveLength(restartsBeforeStop); // stop()'s AbortError did not restart it
    expect(informer.get('stopped')).toBeUndefined();
  });

  it('caches listed and watched objects without their managedFields, which stay on the API server', async () => {
    const ns = await createNamespace(cp, 'inf-mf');
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('listed', 1));
    const informer = new ResilientInformer<CustomObject>(kc, customWatch(makeClients(kc, ns), 'Plan'), { log: createLogger('warn', {}, () => {}) });
    await informer.start();
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('watched', 2));
    await waitFor('the watched Plan', async () => informer.get('watched') !== undefined);
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('listed', 4)); // an update, through the watch
    await waitFor('the updated Plan', async () => (informer.get('listed')?.spec as { tier?: number } | undefined)?.tier === 4);
    for (const name of ['listed', 'watched']) {
      expect(informer.get(name)?.metadata?.name).toBe(name);
      expect(informer.get(name)?.metadata).not.toHaveProperty('managedFields');
      const onServer = JSON.parse(await kubectlOk(cp, ['get', '-n', ns, 'plans.gateway.svc.dev', name, '-o', 'json', '--show-managed-fields'])) as {
        metadata: { managedFields?: unknown[] };
      };
      expect(onServer.metadata.managedFields?.length).toBeGreaterThan(0);
    }
    expect(informer.list().map((o) => o.metadata?.managedFields)).toEqual([undefined, undefined]);
    await informer.stop();
  });

  it('lists in pages, every object once, and then watches from the list', async () => {
    const ns = await createNamespace(cp, 'inf-pages');
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], [1, 2, 3, 4, 5].map((i) => plan(`p${i}`, i)).join('\n---\n'));
    await kubectlOk(cp, ['create', 'secret', 'generic', '-n', ns, 's1', '--from-literal=k=v']);
    await kubectlOk(cp, ['create', 'secret', 'generic', '-n', ns, 's2', '--from-literal=k=v']);
    await kubectlOk(cp, ['create', 'secret', 'generic', '-n', ns, 's3', '--from-literal=k=v']);
    const clients = makeClients(kc, ns);
    const pages: Array<string | undefined> = [];
    const page = customPage(clients, 'Plan');
    // The pages the API server was asked for: the first, then one per continue token.
    const counted = { ...customWatch(clients, 'Plan'), list: () => pagedList((limit, cont) => (pages.push(cont), page(limit, cont)), 2) };
    const plans = new ResilientInformer<CustomObject>(kc, counted, { log: createLogger('warn', {}, () => {}) });
    const secrets = new ResilientInformer<V1Secret>(kc, secretWatch(clients, 2), { log: createLogger('warn', {}, () => {}) });
    await Promise.all([plans.start(), secrets.start()]);
    expect(pages).toHaveLength(3);
    expect(pages[0]).toBeUndefined();
    expect(
      plans
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    expect(plans.list().every((o) => o.metadata?.managedFields === undefined)).toBe(true);
    expect(new Set(secrets.list().map((o) => o.metadata?.name))).toEqual(new Set(['s1', 's2', 's3']));
    // The watch starts at the list's resourceVersion: a change after it arrives, none before it is missed.
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], plan('p6', 6));
    await waitFor('the Plan made after the list', async () => plans.get('p6') !== undefined);
    expect(plans.list()).toHaveLength(6);
    await Promise.all([plans.stop(), secrets.stop()]);
  });
});
