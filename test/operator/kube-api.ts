// Fast reads of the test control plane as the admin (kubectl forks a process per call; polling wants less).
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { ControlPlane } from '../k8s/control-plane.ts';

export interface AdminApi {
  core: CoreV1Api;
  custom: CustomObjectsApi;
}

export function adminApi(cp: ControlPlane): AdminApi {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfig);
  return { core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

/** The key in a Secret's data key `key`, or undefined while the Secret or the key does not exist. */
export async function secretKey(api: AdminApi, ns: string, name: string): Promise<string | undefined> {
  try {
    const s = await api.core.readNamespacedSecret({ name, namespace: ns });
    const raw = s.data?.key;
    return raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8');
  } catch {
    return undefined;
  }
}

export interface ApiKeyObject {
  metadata: { name: string; finalizers?: string[]; annotations?: Record<string, string>; generation?: number; uid?: string };
  spec: Record<string, unknown>;
  status?: {
    state?: string;
    displayedKey?: string;
    secretName?: string;
    revokedAt?: string;
    observedGeneration?: number;
    conditions?: Array<{ type: string; status: string; reason: string; message: string; observedGeneration?: number }>;
  };
}

export async function getCustom<T = ApiKeyObject>(api: AdminApi, ns: string, plural: string, name: string): Promise<T | undefined> {
  try {
    return (await api.custom.getNamespacedCustomObject({ group: 'gateway.svc.dev', version: 'v1alpha1', namespace: ns, plural, name })) as T;
  } catch {
    return undefined;
  }
}

export function ready(obj: ApiKeyObject | undefined): { status: string; reason: string; observedGeneration?: number } | undefined {
  return obj?.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Polls `probe` until it returns something other than undefined/false; returns it. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 30_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined | false;
  while (Date.now() < end) {
    last = await probe();
    if (last !== undefined && last !== false) return last;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}
