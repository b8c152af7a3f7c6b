// The harness itself: a working API server with an admin kubeconfig, per-test namespaces, a clean stop,
// and a how-to (never a skip) when the binaries are missing.
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinaries, versions } from './binaries.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { createNamespace, kubectl, kubectlOk } from './kubectl.ts';

describe('findBinaries', () => {
  it('fails with how to get the binaries when they are missing', () => {
    const env = { SVC_K8S_CACHE: '/nonexistent/svc-k8s-cache', PATH: '' };
    expect(() => findBinaries(env)).toThrow(/kube-apiserver, etcd.*bash test\/k8s\/build-binaries\.sh.*KUBEBUILDER_ASSETS/s);
  });

  it('prefers KUBEBUILDER_ASSETS when it holds the binaries', () => {
    const dir = dirname(findBinaries().kubeApiserver);
    expect(findBinaries({ ...process.env, KUBEBUILDER_ASSETS: dir, SVC_K8S_CACHE: '/nonexistent' }).etcd).toBe(`${dir}/etcd`);
  });
});

describe('startControlPlane', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startControlPlane();
  }, 180_000);
  afterAll(async () => {
    await cp?.stop();
  });

  it('serves the Kubernetes version we build', async () => {
    const version = JSON.parse(await kubectlOk(cp, ['version', '-o', 'json']));
    expect(version.serverVersion.gitVersion).toBe(versions().k8s);
    expect(cp.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('authenticates the kubeconfig as a cluster admin', async () => {
    expect((await kubectlOk(cp, ['auth', 'can-i', '*', '*', '--all-namespaces'])).trim()).toBe('yes');
    const whoami = JSON.parse(await kubectlOk(cp, ['auth', 'whoami', '-o', 'json']));
    expect(whoami.status.userInfo.groups).toContain('system:masters');
  });

  it('gives each test its own namespace', async () => {
    const [a, b] = [await createNamespace(cp, 'one'), await createNamespace(cp, 'one')];
    expect(a).not.toBe(b);
    await kubectlOk(cp, ['create', 'configmap', 'c', '-n', a, '--from-literal=k=v']);
    expect((await kubectl(cp, ['get', 'configmap', 'c', '-n', b])).code).not.toBe(0);
  });

  it('stops both processes and removes its files', async () => {
    const other = await startControlPlane();
    await other.stop();
    expect(existsSync(dirname(other.kubeconfig))).toBe(false);
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(other.server).port), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  }, 180_000);
});
