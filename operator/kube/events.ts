// Kubernetes Events (core/v1) about the operator's objects, as `kubectl describe` and `kubectl events` show them.
// Best effort: an Event that cannot be written is logged, never a reason to fail a reconcile.
import { randomBytes } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { Logger } from '../log.ts';
import type { Clients, CustomObject } from './clients.ts';

export const COMPONENT = 'svc-gateway-operator';

export interface EventNote {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  message: string;
}

export class EventRecorder {
  private readonly clients: Clients;
  private readonly identity: string;
  private readonly log: Logger;

  constructor(clients: Clients, identity: string, log: Logger) {
    this.clients = clients;
    this.identity = identity;
    this.log = log;
  }

  async record(obj: CustomObject, note: EventNote): Promise<void> {
    const name = obj.metadata?.name ?? '';
    const now = new Date();
    const event: CoreV1Event = {
      metadata: { name: `${name}.${now.getTime().toString(16)}${randomBytes(2).toString('hex')}`, namespace: this.clients.namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name,
        namespace: this.clients.namespace,
        uid: obj.metadata?.uid,
        resourceVersion: obj.metadata?.resourceVersion,
      },
      type: note.type,
      reason: note.reason,
      action: note.action,
      message: note.message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: COMPONENT },
      reportingComponent: COMPONENT,
      reportingInstance: this.identity,
    };
    try {
      await this.clients.core.createNamespacedEvent({ namespace: this.clients.namespace, body: event });
    } catch (err) {
      this.log.warn('Failed to record event', { [obj.kind ?? 'object']: `${this.clients.namespace}/${name}`, reason: note.reason, error: err });
    }
  }
}
