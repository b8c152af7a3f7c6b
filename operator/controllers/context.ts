// What every controller gets: the API, the informer caches of the one namespace, the shared state (narrow: publish
// config, revoke and read keys, read ledgers), the pepper.
import type { V1Secret } from '@kubernetes/client-node';
import type { OperatorState } from '../../gateway/state/operator-state.ts';
import type { Clients, CrKind, CustomObject } from '../kube/clients.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { ResilientInformer } from '../kube/informer.ts';
import type { Logger } from '../log.ts';
import type { Outcome } from '../queue/work-queue.ts';

export type Caches = Record<CrKind, ResilientInformer<CustomObject>> & { Secret: ResilientInformer<V1Secret> };

export interface ControllerContext {
  clients: Clients;
  caches: Caches;
  store: OperatorState;
  pepper: string;
  log: Logger;
  events: EventRecorder;
  now: () => Date;
}

/** One controller per kind: level-based, so reconciling a name twice does what reconciling it once did. */
export interface Reconciler {
  readonly kind: CrKind | 'Config';
  reconcile(name: string): Promise<Outcome | void>;
}

export function objectKey(ctx: ControllerContext, name: string): string {
  return `${ctx.clients.namespace}/${name}`;
}

export function isDeleting(obj: CustomObject): boolean {
  return Boolean(obj.metadata?.deletionTimestamp);
}
