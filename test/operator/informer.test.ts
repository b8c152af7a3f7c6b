// The informer wrapper against a real API server: a failing LIST is retried until the cache is filled (client-node
// alone would stop), events reach listeners by name, and stop() is final (its AbortError revives nothing).
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResilientInformer } from '../../operator/kube/informer.ts';
import { customWatch, makeClients, type CustomObject } from '../../operator/kube/clients.ts';
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
});
