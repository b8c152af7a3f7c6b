// Offboarding (Account spec.selfService.revokeOnOffboard): every SVC_OFFBOARD_CHECK_SECONDS the leader asks, per
// distinct owner of the account's unrevoked console-made keys, whether that person still has a right on the
// account: a LocalSubjectAccessReview per verb the console knows (get, create-own-keys, manage-keys, view-usage,
// manage-billing) on accounts/<name>, with the user name and the groups the console recorded on the key when it was
// made. No verb allowed: the owner's keys of that account are revoked (spec.revoked, with revoked-by and a reason),
// the ApiKey controller then revokes them in every gateway like every other revocation. A review that fails revokes nothing.
import { CREATED_BY, CREATED_BY_GROUPS, recordedGroups, REVOKE_REASON, REVOKED_BY } from '../../crds/schema/key-owner.ts';
import { GROUP } from '../../crds/schema/common.ts';
import { crRef, statusOf, type CustomObject } from '../kube/clients.ts';
import { FIELD_MANAGER } from '../kube/patch.ts';
import type { OperatorMetrics } from '../metrics.ts';
import { objectKey, type ControllerContext } from './context.ts';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The console's verbs on accounts: each one of them is a right on the account. */
export const ACCOUNT_VERBS = ['get', 'create-own-keys', 'manage-keys', 'view-usage', 'manage-billing'] as const;

export const OFFBOARD_REASON = 'KeyRevokedOffboarded';

/** One person as a key recorded them, on one account. */
export interface Owner {
  account: string;
  user: string;
  groups: string[];
  /** The ApiKey objects (names) of theirs to revoke if they have no right left. */
  keys: string[];
}

interface KeyView {
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec?: { accountRef?: unknown; revoked?: unknown };
}

function offboards(a: CustomObject): boolean {
  const s = a.spec as { selfService?: { revokeOnOffboard?: unknown } } | undefined;
  return s?.selfService?.revokeOnOffboard === true;
}

/** The owners to ask about: unrevoked keys made for a person (created-by), of accounts with revokeOnOffboard. */
export function ownersToCheck(accounts: readonly CustomObject[], keys: readonly CustomObject[]): Owner[] {
  const on = new Set(accounts.filter(offboards).map((a) => a.metadata?.name ?? ''));
  const owners = new Map<string, Owner>();
  for (const k of keys as readonly KeyView[]) {
    const account = typeof k.spec?.accountRef === 'string' ? k.spec.accountRef : '';
    const user = k.metadata?.annotations?.[CREATED_BY];
    const name = k.metadata?.name;
    // The standalone admin token is nobody's in particular: its keys are the account's, never offboarded.
    if (!on.has(account) || !user || user === 'admin' || !name || k.spec?.revoked === true) continue;
    const groups = [...new Set(recordedGroups(k.metadata?.annotations?.[CREATED_BY_GROUPS]))].sort();
    const id = JSON.stringify([account, user, groups]);
    const o = owners.get(id) ?? { account, user, groups, keys: [] };
    o.keys.push(name);
    owners.set(id, o);
  }
  return [...owners.values()];
}

export function offboardMessage(o: Pick<Owner, 'account' | 'user'>): string {
  return `${o.user} has no right left on account ${o.account}`;
}

export class Offboarding {
  private readonly ctx: ControllerContext;
  private readonly everyMs: number;
  private readonly metrics: OperatorMetrics;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(ctx: ControllerContext, metrics: OperatorMetrics, everyMs: number) {
    this.ctx = ctx;
    this.metrics = metrics;
    this.everyMs = everyMs;
  }

  start(): void {
    if (this.stopped) return;
    this.running = this.tick().finally(() => {
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(() => this.start(), this.everyMs);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One pass; never throws (a failed review or patch is logged and tried again next time). */
  async tick(): Promise<void> {
    const owners = ownersToCheck(this.ctx.caches.Account.list(), this.ctx.caches.ApiKey.list());
    for (const o of owners) {
      if (this.stopped) return;
      let gone: boolean;
      try {
        gone = !(await this.hasAnyRight(o));
      } catch (err) {
        this.metrics.offboardChecks.inc({ result: 'error' });
        this.ctx.log.warn('Could not ask whether a key owner still has a right on the account; trying again later', {
          Account: objectKey(this.ctx, o.account),
          user: o.user,
          error: err,
        });
        continue;
      }
      this.metrics.offboardChecks.inc({ result: gone ? 'revoked' : 'kept' });
      if (gone) for (const name of o.keys) await this.revoke(name, o);
    }
  }

  private async hasAnyRight(o: Owner): Promise<boolean> {
    for (const verb of ACCOUNT_VERBS) {
      const review = await this.ctx.clients.authz.createNamespacedLocalSubjectAccessReview({
        namespace: this.ctx.clients.namespace,
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'LocalSubjectAccessReview',
          metadata: { namespace: this.ctx.clients.namespace },
          spec: {
            user: o.user,
            groups: o.groups,
            resourceAttributes: { namespace: this.ctx.clients.namespace, group: GROUP, resource: 'accounts', name: o.account, verb },
          },
        },
      });
      if (review.status?.allowed === true) return true;
    }
    return false;
  }

  private async revoke(name: string, o: Owner): Promise<void> {
    const obj = this.ctx.caches.ApiKey.get(name);
    if (!obj || (obj.spec as { revoked?: unknown } | undefined)?.revoked === true) return;
    const why = offboardMessage(o);
    try {
      // Conditional on the version the owner was read from: a key changed meanwhile is looked at again next time.
      await this.ctx.clients.custom.patchNamespacedCustomObject(
        {
          ...crRef(this.ctx.clients, 'ApiKey'),
          name,
          fieldManager: FIELD_MANAGER,
          body: {
            metadata: { resourceVersion: obj.metadata?.resourceVersion, annotations: { [REVOKED_BY]: FIELD_MANAGER, [REVOKE_REASON]: `offboarded: ${why}` } },
            spec: { revoked: true },
          },
        },
        MERGE,
      );
    } catch (err) {
      if (statusOf(err) !== 404 && statusOf(err) !== 409) {
        this.ctx.log.warn('Could not revoke the key of an offboarded owner; trying again later', { ApiKey: objectKey(this.ctx, name), error: err });
      }
      return;
    }
    this.ctx.log.info('Revoked key of an offboarded owner', { ApiKey: objectKey(this.ctx, name), Account: o.account, user: o.user });
    await this.ctx.events.record(obj, {
      type: 'Warning',
      reason: OFFBOARD_REASON,
      action: 'Revoke',
      message: `Revoked: ${why} (Account spec.selfService.revokeOnOffboard).`,
    });
  }
}
