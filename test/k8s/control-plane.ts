// A real, throwaway Kubernetes control plane for tests: etcd + kube-apiserver as local processes, flags as
// controller-runtime's envtest sets them, an admin kubeconfig (client certificate in system:masters).
// No controller-manager runs: no garbage collection, namespaces stay Terminating; CRDs, CEL, /status, RBAC work.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { findBinaries } from './binaries.ts';
import { makePki, type Pki } from './pki.ts';
import { freePort, startProcess, stopProcess, waitUntilReady, type Proc } from './processes.ts';

export interface ControlPlane {
  /** Path of an admin kubeconfig file. */
  kubeconfig: string;
  /** https://127.0.0.1:<port> */
  server: string;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;

async function startEtcd(bin: string, dir: string): Promise<{ proc: Proc; url: string }> {
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const proc = startProcess(
    'etcd',
    bin,
    [
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      '--name=default',
      '--unsafe-no-fsync', // data is thrown away; fsync only slows tests
      '--log-level=warn',
    ],
    join(dir, 'etcd.log'),
  );
  await waitUntilReady(
    proc,
    async () => {
      const res = await fetch(`${url}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    },
    READY_TIMEOUT_MS,
  );
  return { proc, url };
}

function readyz(port: number, pki: Pki): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/readyz',
        method: 'GET',
        timeout: 5_000,
        ca: readFileSync(pki.caCert),
        cert: readFileSync(pki.adminCert),
        key: readFileSync(pki.adminKey),
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function startApiserver(bin: string, dir: string, etcdUrl: string, pki: Pki): Promise<{ proc: Proc; port: number }> {
  const port = await freePort();
  const proc = startProcess(
    'kube-apiserver',
    bin,
    [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${dir}`, // holds apiserver.crt/.key, signed by our CA
      `--client-ca-file=${pki.caCert}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=https://127.0.0.1:${port}`,
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      // No controller-manager creates ServiceAccounts, so this plugin would refuse every Pod (as in envtest).
      '--disable-admission-plugins=ServiceAccount',
    ],
    join(dir, 'kube-apiserver.log'),
  );
  await waitUntilReady(proc, () => readyz(port, pki), READY_TIMEOUT_MS);
  return { proc, port };
}

function writeKubeconfig(path: string, server: string, pki: Pki): void {
  const b64 = (file: string): string => readFileSync(file).toString('base64');
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'svc-gateway-test', cluster: { server, 'certificate-authority-data': b64(pki.caCert) } }],
      users: [{ name: 'admin', user: { 'client-certificate-data': b64(pki.adminCert), 'client-key-data': b64(pki.adminKey) } }],
      contexts: [{ name: 'svc-gateway-test', context: { cluster: 'svc-gateway-test', user: 'admin' } }],
      'current-context': 'svc-gateway-test',
    }),
    { mode: 0o600 },
  );
}

/** Starts etcd and kube-apiserver; throws with a how-to when the binaries are missing. */
export async function startControlPlane(): Promise<ControlPlane> {
  const bin = findBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'svc-k8s-'));
  const procs: Proc[] = [];
  const stop = async (): Promise<void> => {
    for (const p of procs.reverse()) await stopProcess(p);
    procs.length = 0;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pki = makePki(dir);
    const etcd = await startEtcd(bin.etcd, dir);
    procs.push(etcd.proc);
    const api = await startApiserver(bin.kubeApiserver, dir, etcd.url, pki);
    procs.push(api.proc);
    const server = `https://127.0.0.1:${api.port}`;
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, server, pki);
    return { kubeconfig, server, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
