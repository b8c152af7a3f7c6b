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

/** Objects per LIST page (client-go's pager uses 500 too). */
export const LIST_PAGE = 500;

/**
 * A whole collection read in pages of `limit`, as one list at the first page's resourceVersion (every page of a
 * continued list is read at it), each object without its managedFields as soon as its page arrives. One LIST of
 * every object would hold the whole answer's text and its parse at once: at 50,000 ApiKeys with their status, and
 * their Secrets, far more than the operator's memory limit, at every restart.
 */
export async function pagedList<T extends KubernetesObject>(
  page: (limit: number, cont: string | undefined) => Promise<KubernetesListObject<T>>,
  limit = LIST_PAGE,
): Promise<KubernetesListObject<T>> {
  const first = await page(limit, undefined);
  const items: T[] = [];
  let current = first;
  for (;;) {
    for (const o of current.items) {
      if (o.metadata?.managedFields) delete o.metadata.managedFields;
      items.push(o);
    }
    // A typed list (Secrets) names the token _continue; a custom objects' list is the API server's JSON: continue.
    const cont = current.metadata?._continue ?? (current.metadata as { continue?: string } | undefined)?.continue;
    if (!cont) break;
    current = await page(limit, cont);
  }
  // The watch that follows starts at this resourceVersion.
  return { ...first, items, metadata: { resourceVersion: first.metadata?.resourceVersion } };
}

/** One page of a kind's custom objects in the namespace. */
export function customPage(c: Clients, kind: CrKind): (limit: number, cont: string | undefined) => Promise<KubernetesListObject<CustomObject>> {
  return async (limit, cont) =>
    (await c.custom.listNamespacedCustomObject({ ...crRef(c, kind), limit, _continue: cont })) as KubernetesListObject<CustomObject>;
}

export function customWatch(c: Clients, kind: CrKind, pageSize = LIST_PAGE): WatchSpec<CustomObject> {
  return {
    kind,
    namespace: c.namespace,
    path: `/apis/${GROUP}/${VERSION}/namespaces/${c.namespace}/${PLURALS[kind]}`,
    list: () => pagedList(customPage(c, kind), pageSize),
  };
}

export function secretWatch(c: Clients, pageSize = LIST_PAGE): WatchSpec<V1Secret> {
  return {
    kind: 'Secret',
    namespace: c.namespace,
    path: `/api/v1/namespaces/${c.namespace}/secrets`,
    list: () => pagedList((limit, cont) => c.core.listNamespacedSecret({ namespace: c.namespace, limit, _continue: cont }), pageSize),
  };
}

/** The HTTP status of a failed API call (ApiException.code), or undefined for other errors. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
