// The whole system on loopback: a real kube-apiserver + etcd with the generated CRDs, a real Redis, operators
// (node operator/main.ts, under a ServiceAccount bound to operator/rbac/role.yaml) and cluster-mode gateways
// (node gateway/main.ts --cluster). One installation = one namespace + one Redis prefix, as in production.
import { randomBytes } from 'node:crypto';
import type { ControlPlane } from '../k8s/control-plane.ts';
import { startControlPlane } from '../k8s/control-plane.ts';
import { installCrds } from '../k8s/install-crds.ts';
import { createNamespace, kubectl, kubectlOk, type KubectlResult } from '../k8s/kubectl.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { clusterAsTestRedis, clusterWanted } from '../helpers/redis-cluster.ts';
import { operatorIdentity } from './identity.ts';
import { adminApi, type AdminApi } from './kube-api.ts';
import { startOperatorProcess, type OperatorPlacement, type OperatorProcess } from './operator-process.ts';

export const PEPPER = 'operator-test-pepper-shared-with-the-gateways';

export interface Cluster {
  cp: ControlPlane;
  /** One Redis, or with SVC_TEST_REDIS_CLUSTER=1 a Redis Cluster (cluster: true) the processes reach with SVC_REDIS_CLUSTER=1. */
  redis: TestRedis & { cluster?: boolean };
  api: AdminApi;
  stop(): Promise<void>;
}

export async function startCluster(name: string): Promise<Cluster> {
  const [cp, redis] = await Promise.all([startControlPlane(), clusterWanted() ? clusterAsTestRedis(name) : startRedis(name)]);
  await installCrds(cp);
  return {
    cp,
    redis,
    api: adminApi(cp),
    stop: async () => {
      await Promise.allSettled([cp.stop(), redis.stop()]);
    },
  };
}

export interface Installation {
  ns: string;
  prefix: string;
  kubeconfig: string;
  operators: OperatorProcess[];
  gateways: GatewayProcess[];
  startOperator(name: string, env?: Record<string, string>, placement?: OperatorPlacement): Promise<OperatorProcess>;
  startGateway(env?: Record<string, string>): Promise<GatewayProcess>;
  kubectl(args: string[], input?: string): Promise<KubectlResult>;
  kubectlOk(args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function install(cluster: Cluster, name: string): Promise<Installation> {
  const ns = await createNamespace(cluster.cp, name);
  const kubeconfig = await operatorIdentity(cluster.cp, ns);
  const prefix = `${cluster.redis.prefix}-${randomBytes(3).toString('hex')}`;
  const redisEnv = { REDIS_URL: cluster.redis.url, ...(cluster.redis.cluster ? { SVC_REDIS_CLUSTER: '1' } : {}) };
  const operators: OperatorProcess[] = [];
  const gateways: GatewayProcess[] = [];
  const inst: Installation = {
    ns,
    prefix,
    kubeconfig,
    operators,
    gateways,
    startOperator: async (opName, env = {}, placement = {}) => {
      const op = await startOperatorProcess(
        opName,
        {
          KUBECONFIG: kubeconfig,
          WATCH_NAMESPACE: ns,
          ...redisEnv,
          SVC_REDIS_PREFIX: prefix,
          SVC_KEY_PEPPER: PEPPER,
          ...env,
        },
        placement,
      );
      operators.push(op);
      return op;
    },
    startGateway: async (env = {}) => {
      const gw = await startGatewayProcess(
        {
          ...redisEnv,
          SVC_REDIS_PREFIX: prefix,
          SVC_KEY_PEPPER: PEPPER,
          SVC_CONFIG_POLL_MS: '1000',
          LOG_LEVEL: 'warn',
          ...env,
        },
        ['--cluster'],
      );
      gateways.push(gw);
      return gw;
    },
    kubectl: (args, input) => kubectl(cluster.cp, ['-n', ns, ...args], input),
    kubectlOk: (args, input) => kubectlOk(cluster.cp, ['-n', ns, ...args], input),
    stop: async () => {
      await Promise.all([...operators.map((o) => o.kill('SIGKILL')), ...gateways.map((g) => g.stop())]);
    },
  };
  return inst;
}

/** Waits until a gateway reports ready (it has a config); `context` is printed on failure (operator logs). */
export async function gatewayReady(gw: GatewayProcess, timeoutMs = 20_000, context: () => string = () => ''): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (
      (await fetch(`${gw.url}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gateway ${gw.url} never became ready:\n${gw.output()}\n${context()}`);
}
