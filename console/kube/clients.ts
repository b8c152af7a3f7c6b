// The Kubernetes API as the console uses it, with its own ServiceAccount: TokenReview and SubjectAccessReview
// (who is this, may they), and the custom resources of one namespace (read accounts and plans, write ApiKeys).
import { AuthenticationV1Api, AuthorizationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../crds/schema/common.ts';

export interface KubeClients {
  namespace: string;
  authn: AuthenticationV1Api;
  authz: AuthorizationV1Api;
  core: CoreV1Api;
  custom: CustomObjectsApi;
}

/** KUBECONFIG when set, else ~/.kube/config, else the in-cluster ServiceAccount. */
export function kubeClients(namespace: string, kc = defaultKubeConfig()): KubeClients {
  return {
    namespace,
    authn: kc.makeApiClient(AuthenticationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('No Kubernetes cluster configured: set KUBECONFIG or run in a Pod with a service account.');
  return kc;
}

export type Plural = 'accounts' | 'plans' | 'apikeys';

export function ref(c: KubeClients, plural: Plural): { group: string; version: string; namespace: string; plural: string } {
  return { group: GROUP, version: VERSION, namespace: c.namespace, plural };
}

export const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const FIELD_MANAGER = 'svc-gateway-console';

/** The HTTP status of a failed API call (ApiException.code), or undefined for other errors. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
