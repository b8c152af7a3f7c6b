// The Kubernetes cluster the end-to-end test runs on. Two kinds, one test body (node.test.ts):
//  - local (the default, in `npm test`): test/e2e/local-cluster.sh brings up a real single node from local processes
//    (no Docker), with the image built from the Dockerfile by test/e2e/images.sh; pods and Services are reachable from
//    the host (198.18.0.0/15), and services on the host listen on the node's address 198.18.0.1.
//  - kind (E2E_CLUSTER=kind, set by test/e2e/kind.sh): a cluster kind.sh created, the image loaded into it; the host
//    is reached from pods at E2E_HOST_ADDRESS, and pods and Services from the host through `kubectl port-forward`.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ROOT } from '../helpers/process.ts';
import { findBinaries } from '../k8s/binaries.ts';
import type { ControlPlane } from '../k8s/control-plane.ts';

export interface Forward {
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

export interface E2eCluster {
  kind: 'local' | 'kind';
  /** For test/k8s/kubectl.ts and test/console/cluster-identity.ts. */
  cp: ControlPlane;
  kubectl: string;
  /** Where pods reach the host's Redis, Postgres, fake upstream. */
  hostAddress: string;
  image: { repository: string; tag: string; pullPolicy: string };
  /** How long making the images and bringing the node up took (local node only). */
  timings: Record<string, string>;
  /** An http URL on which the host reaches port `port` of a Service (name) or a Pod (pod/<name>). */
  reach(ns: string, target: string, port: number): Promise<Forward>;
  stop(): Promise<void>;
}

const LOCAL_NODE_IP = '198.18.0.1';

export const HOW_TO_GET_A_NODE =
  'The end-to-end test needs a real node: run as root on Linux with Debian packages containerd runc ' +
  'containernetworking-plugins conntrack iptables buildah debootstrap (.ci/run installs them); the Kubernetes ' +
  'binaries are built once by `bash test/k8s/build-binaries.sh node`. Or run it on kind: `bash test/e2e/kind.sh`.';

function run(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-6000)}${stdout.slice(-2000)}`));
      else resolve(stdout);
    });
  });
}

/** A TCP relay from 127.0.0.1 to host:port: the console sets its cookie without Secure only on a loopback origin. */
async function relay(host: string, port: number): Promise<Forward> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  const local = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${local}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

async function kubectlJson(c: { kubectl: string; cp: ControlPlane }, args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse(await run(c.kubectl, [`--kubeconfig=${c.cp.kubeconfig}`, ...args, '-o', 'json'], 60_000)) as Record<string, unknown>;
}

/**
 * The node is one per machine (fixed addresses, iptables): a test run holds this lock from before `up` until after
 * `down`. flock runs `cat` on our stdin, so the lock goes with this process even if it is killed.
 */
function machineLock(path: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', [path, '-c', 'echo locked; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
    child.once('error', reject);
    child.stdout?.once('data', () => resolve(() => child.stdin?.end()));
  });
}

/** The local node: images built (cached), a fresh node brought up (a leftover of a killed run taken down first). */
async function localCluster(): Promise<E2eCluster> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) throw new Error(`Not root on Linux. ${HOW_TO_GET_A_NODE}`);
  const release = await machineLock('/tmp/svc-e2e-node.run.lock');
  const script = join(ROOT, 'test/e2e/local-cluster.sh');
  const timings: Record<string, string> = {};
  const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
  const prepare = async (): Promise<{ image: string; kubeconfig: string }> => {
    let t = Date.now();
    const images = (await run('bash', [join(ROOT, 'test/e2e/images.sh'), 'build'], 45 * 60_000)).trim().split('\n');
    timings['images (test/e2e/images.sh build)'] = seconds(t);
    const size = (await run('bash', [join(ROOT, 'test/e2e/images.sh'), 'size'], 60_000)).trim();
    if (size) timings['image size (uncompressed, buildah)'] = size;
    await run('bash', [script, 'down'], 10 * 60_000);
    t = Date.now();
    const kubeconfig = (await run('bash', [script, 'up'], 45 * 60_000)).trim().split('\n').pop() ?? '';
    timings['node up (local-cluster.sh up, images imported)'] = seconds(t);
    return { image: images[images.length - 1] ?? '', kubeconfig };
  };
  const { image, kubeconfig } = await prepare().catch((err: unknown) => {
    release();
    throw err;
  });
  const [repository, tag] = image.split(/:(?=[^:]+$)/);
  const cp: ControlPlane = { kubeconfig, server: `https://${LOCAL_NODE_IP}:6443`, stop: async () => {} };
  const c = { kubectl: findBinaries().kubectl, cp };
  return {
    kind: 'local',
    ...c,
    hostAddress: LOCAL_NODE_IP,
    timings,
    image: { repository: repository ?? '', tag: tag ?? '', pullPolicy: 'Never' },
    reach: async (ns, target, port) => {
      // Pods and Service addresses are on this machine (the bridge, and kube-proxy's rules for Services): relayed
      // from 127.0.0.1 so that a browser sees a loopback origin.
      if (target.startsWith('pod/')) {
        const pod = await kubectlJson(c, ['get', '-n', ns, target]);
        return relay((pod.status as { podIP: string }).podIP, port);
      }
      const svc = await kubectlJson(c, ['get', '-n', ns, 'service', target]);
      return relay((svc.spec as { clusterIP: string }).clusterIP, port);
    },
    stop: async () => {
      try {
        const t = Date.now();
        await run('bash', [script, 'down'], 10 * 60_000);
        timings['node down'] ??= seconds(t);
      } finally {
        release();
      }
    },
  };
}

/** `kubectl port-forward` to 127.0.0.1 (kind: the host reaches neither pods nor Services directly). */
function portForward(c: { kubectl: string; cp: ControlPlane }, ns: string, target: string, port: number): Promise<Forward> {
  return new Promise((resolve, reject) => {
    const ref = target.startsWith('pod/') ? target : `service/${target}`;
    const child: ChildProcess = spawn(c.kubectl, [`--kubeconfig=${c.cp.kubeconfig}`, 'port-forward', '-n', ns, ref, `:${port}`, '--address=127.0.0.1']);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (m)
        resolve({
          url: `http://127.0.0.1:${m[1]}`,
          close: async () => {
            child.kill();
          },
        });
    });
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`kubectl port-forward ${ref} exited (${code}): ${out}`)));
  });
}

function kindCluster(): E2eCluster {
  const need = (name: string): string => {
    const v = process.env[name];
    if (!v) throw new Error(`E2E_CLUSTER=kind needs ${name} (test/e2e/kind.sh sets it)`);
    return v;
  };
  const image = need('E2E_IMAGE');
  const [repository, tag] = image.split(/:(?=[^:]+$)/);
  const cp: ControlPlane = { kubeconfig: need('E2E_KUBECONFIG'), server: '', stop: async () => {} };
  const c = { kubectl: process.env.E2E_KUBECTL ?? 'kubectl', cp };
  return {
    kind: 'kind',
    ...c,
    hostAddress: need('E2E_HOST_ADDRESS'),
    timings: {},
    image: { repository: repository ?? '', tag: tag ?? '', pullPolicy: 'Never' },
    reach: (ns, target, port) => portForward(c, ns, target, port),
    stop: async () => {},
  };
}

export function e2eCluster(): Promise<E2eCluster> {
  return process.env.E2E_CLUSTER === 'kind' ? Promise.resolve(kindCluster()) : localCluster();
}
