// The Kubernetes API as the operator uses it: one namespace, the four custom resources, Secrets, Leases, Events.
import {
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Secret,
} from '@kubernetes/client-node';
import { PLURALS, type CrKind } from '../../crds/crd-kinds.ts';
import { GROUP, VERSION } from '../../crds/schema/common.ts';
import { reuseConnections } from './connections.ts';
import type { WatchSpec } from './informer.ts';

export { CR_KINDS, type CrKind } from '../../crds/crd-kinds.ts';

/** A custom resource as the API server returns it; its spec is validated by the zod schema before use. */
export interface CustomObject extends KubernetesObject {
  spec?: unknown;
  status?: Record<string, unknown>;
}

export interface Clients {
  kc: KubeConfig;
  namespace: string;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  coordination: CoordinationV1Api;
  /** LocalSubjectAccessReviews in the namespace (the offboarding check). */
  authz: AuthorizationV1Api;
}

/** KUBECONFIG when set, else ~/.kube/config, else the in-cluster service account. */
export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('No Kubernetes cluster configured: set KUBECONFIG or run in a Pod with a service account.');
  return reuseConnections(kc);
}

export function makeClients(kc: KubeConfig, namespace: string): Clients {
  return {
    kc,
    namespace,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    coordination: kc.makeApiClient(CoordinationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
  };
}

export function crRef(c: Clients, kind: CrKind): { group: string; version: string; namespace: string; plural: string } {
  return { group: GROUP, version: VERSION, namespace: c.namespace, plural: PLURALS[kind] };
}

export function customWatch(c: Clients, kind: CrKind): WatchSpec<CustomObject> {
  return {
    kind,
    namespace: c.namespace,
    path: `/apis/${GROUP}/${VERSION}/namespaces/${c.namespace}/${PLURALS[kind]}`,
    list: async () => (await c.custom.listNamespacedCustomObject(crRef(c, kind))) as KubernetesListObject<CustomObject>,
  };
}

export function secretWatch(c: Clients): WatchSpec<V1Secret> {
  return {
    kind: 'Secret',
    namespace: c.namespace,
    path: `/api/v1/namespaces/${c.namespace}/secrets`,
    list: () => c.core.listNamespacedSecret({ namespace: c.namespace }),
  };
}

/** The HTTP status of a failed API call (ApiException.code), or undefined for other errors. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
