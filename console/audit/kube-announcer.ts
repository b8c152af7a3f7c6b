// In a cluster, an account's billing actions are also Events on its Account object (kubectl describe account, or
// kubectl get events --field-selector involvedObject.kind=Account), as key actions are Events on their ApiKey
// (written with the object, console/keys/cluster-backend.ts). Best effort: a missing Event never fails an action.
import type { CoreV1Event } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { API_VERSION } from '../../crds/schema/common.ts';
import { FIELD_MANAGER, ref, type KubeClients } from '../kube/clients.ts';
import type { AuditAnnouncer } from './trail.ts';
import type { AuditRecord } from './record.ts';

const REASONS: Partial<Record<AuditRecord['action'], string>> = {
  'checkout-started': 'CheckoutStarted',
  'statement-downloaded': 'StatementDownloaded',
};

export function eventMessage(r: AuditRecord): string {
  const who = `${r.actor || 'someone'}${r.subject && r.subject !== r.actor ? ` (subject ${r.subject})` : ''}`;
  const what = `${r.action}${r.object ? ` ${r.object}` : ''}`;
  const outcome = r.outcome === 'success' ? '' : ` ${r.outcome} (${r.status})`;
  return `${what}${outcome} in the console by ${who} from ${r.clientIp}${r.detail ? `: ${r.detail}` : ''}`.slice(0, 1000);
}

export class KubeAuditAnnouncer implements AuditAnnouncer {
  private readonly c: KubeClients;

  constructor(c: KubeClients) {
    this.c = c;
  }

  async announce(r: AuditRecord): Promise<void> {
    const reason = REASONS[r.action];
    if (!reason) return;
    const account = (await this.c.custom.getNamespacedCustomObject({ ...ref(this.c, 'accounts'), name: r.account })) as { metadata: { uid?: string } };
    const at = new Date(r.at);
    const body: CoreV1Event = {
      metadata: { name: `${r.account}.${at.getTime().toString(16)}${randomBytes(2).toString('hex')}`, namespace: this.c.namespace },
      involvedObject: { apiVersion: API_VERSION, kind: 'Account', name: r.account, namespace: this.c.namespace, uid: account.metadata.uid },
      type: r.outcome === 'success' ? 'Normal' : 'Warning',
      reason,
      action: r.action,
      message: eventMessage(r),
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: FIELD_MANAGER },
      reportingComponent: FIELD_MANAGER,
      reportingInstance: process.env.HOSTNAME ?? 'console',
    };
    await this.c.core.createNamespacedEvent({ namespace: this.c.namespace, body });
  }
}
