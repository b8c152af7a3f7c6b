// What the controllers' unit tests build a context from: informer caches over fixed objects, and a namespace's
// custom objects as the API server would return them.
import type { V1Secret } from '@kubernetes/client-node';
import type { CrKind, CustomObject } from '../kube/clients.ts';
import type { ResilientInformer } from '../kube/informer.ts';
import type { Caches } from './context.ts';

const API = 'gateway.svc.dev/v1alpha1';
let version = 0;

/** An informer cache as the controllers read it: get by name, list. */
export function cacheOf<T extends { metadata?: { name?: string } }>(objects: T[]): ResilientInformer<T> {
  const byName = new Map(objects.map((o) => [o.metadata?.name ?? '', o]));
  return { get: (name: string) => byName.get(name), list: () => [...byName.values()] } as unknown as ResilientInformer<T>;
}

/** A custom object with a fresh resourceVersion, at generation 1. */
export function cr(kind: string, name: string, spec: object, metadata: object = {}): CustomObject {
  return { apiVersion: API, kind, metadata: { name, resourceVersion: String(++version), generation: 1, ...metadata }, spec };
}

/** Every kind's cache over the objects given (none for a kind not named), and the Secrets. */
export function cachesOf(objects: Partial<Record<CrKind, CustomObject[]>>, secrets: V1Secret[] = []): Caches {
  const kinds: CrKind[] = ['Plan', 'Account', 'ApiKey', 'ModelRoute', 'McpServer', 'Guardrail', 'Incident'];
  const caches = Object.fromEntries(kinds.map((k) => [k, cacheOf(objects[k] ?? [])])) as Partial<Caches>;
  caches.Secret = cacheOf(secrets);
  return caches as Caches;
}
