// Keys in a cluster: ApiKey objects, written with the console's own ServiceAccount. A key made here is carried by
// its ApiKey as an HMAC (spec.keyHash, under the gateways' pepper) and nothing else: no Secret holds it. Who did
// what is on the object (annotations created-by, revoked-by) and in an Event; a rotation's pending revocation is an
// annotation (revoke-at), so it survives restarts of every process and is applied by whichever console is up.
import type { CoreV1Event } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { API_VERSION } from '../../crds/schema/common.ts';
import { displayKey, generateKey, hashKey } from '../../gateway/contract/keys.ts';
import { nanoToUsd, usdToNano } from '../../gateway/contract/money.ts';
import type { LastUsed } from '../../gateway/state/last-used.ts';
import { FIELD_MANAGER, MERGE, ref, statusOf, type KubeClients } from '../kube/clients.ts';
import { actorName, KeyActionError, type CreatedKey, type KeyActor, type KeyBackend, type KeyPage, type KeyRow } from './backend.ts';
import type { KeySpec, PlanLimits } from './key-spec.ts';
import { isExpired, rfc3339 } from '../../gateway/contract/key-expiry.ts';
import { rotatedKeyStops, successorExpiry } from './lifetime.ts';
import { rotatedName } from './rotated-name.ts';
import { mergePolicies } from './self-service-policy.ts';
import type { CompiledSelfService } from '../../gateway/contract/snapshot.ts';
import { isKeyName } from './key-name.ts';
import { kubeRefusal } from './kube-refusal.ts';
import { apiKeyObjectName, keyNameOf } from './object-name.ts';

import { CREATED_BY, CREATED_BY_GROUPS, MAX_RECORDED_GROUPS, REVOKED_BY } from '../../crds/schema/key-owner.ts';
export { CREATED_BY, REVOKED_BY };
export const REVOKE_AT = 'gateway.svc.dev/revoke-at';
export const ACCOUNT_LABEL = 'gateway.svc.dev/account';
const KEY_HMAC = 'gateway.svc.dev/key-hmac';

interface ApiKeyObject {
  metadata: {
    name: string;
    creationTimestamp?: string | Date;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
    resourceVersion?: string;
  };
  spec: {
    accountRef: string;
    displayName?: string;
    monthlyBudgetUsd?: number;
    limits?: { rpm?: number; tpm?: number };
    models?: string[];
    revoked?: boolean;
    keyHash?: string;
    displayedKey?: string;
    expiresAt?: string;
  };
  status?: { state?: string; displayedKey?: string; monthSpendUsd?: string | number; expiresAt?: string };
}

function iso(t: string | Date | undefined): string | null {
  if (!t) return null;
  return typeof t === 'string' ? t : t.toISOString();
}

export class ClusterKeys implements KeyBackend {
  private readonly c: KubeClients;
  private readonly pepper: string;
  private readonly lastUsed: LastUsed;

  constructor(c: KubeClients, pepper: string, lastUsed: LastUsed) {
    this.c = c;
    this.pepper = pepper;
    this.lastUsed = lastUsed;
  }

  async accounts(): Promise<string[]> {
    const list = (await this.c.custom.listNamespacedCustomObject(ref(this.c, 'accounts'))) as { items: Array<{ metadata: { name: string } }> };
    return list.items.map((a) => a.metadata.name).sort();
  }

  async planLimits(account: string): Promise<PlanLimits> {
    type Caps = { maxBudgetUsd?: number; models?: string[]; maxKeysPerPerson?: number };
    try {
      const a = (await this.c.custom.getNamespacedCustomObject({ ...ref(this.c, 'accounts'), name: account })) as {
        spec: { planRef: string; keyPolicy?: { maxKeyAgeDays?: number; requireExpiry?: boolean }; selfService?: Caps };
      };
      const keyPolicy = a.spec.keyPolicy ? { maxKeyAgeDays: a.spec.keyPolicy.maxKeyAgeDays, requireExpiry: a.spec.keyPolicy.requireExpiry === true } : null;
      const policy = (planCaps: Caps | undefined): Pick<PlanLimits, 'selfService'> =>
        planCaps || a.spec.selfService ? { selfService: mergePolicies(capsOf(planCaps), capsOf(a.spec.selfService)) } : {};
      try {
        const p = (await this.c.custom.getNamespacedCustomObject({ ...ref(this.c, 'plans'), name: a.spec.planRef })) as {
          spec: { limits?: { rpm?: number; tpm?: number }; selfService?: Caps };
        };
        return { rpm: p.spec.limits?.rpm ?? null, tpm: p.spec.limits?.tpm ?? null, keyPolicy, ...policy(p.spec.selfService) };
      } catch (err) {
        if (statusOf(err) === 404) return { rpm: null, tpm: null, keyPolicy, ...policy(undefined) };
        throw err;
      }
    } catch (err) {
      if (statusOf(err) === 404) return { rpm: null, tpm: null, keyPolicy: null };
      throw err;
    }
  }

  private async keysOf(account: string): Promise<ApiKeyObject[]> {
    const list = (await this.c.custom.listNamespacedCustomObject(ref(this.c, 'apikeys'))) as { items: ApiKeyObject[] };
    return list.items.filter((k) => k.spec.accountRef === account).sort((a, b) => (keyNameOf(a) < keyNameOf(b) ? -1 : 1));
  }

  async list(account: string, offset: number, limit: number, now: number): Promise<KeyPage> {
    const all = await this.keysOf(account);
    await this.sweep(all, now);
    const page = all.slice(offset, offset + limit);
    const hashOf = (k: ApiKeyObject): string | undefined => k.spec.keyHash ?? k.metadata.annotations?.[KEY_HMAC];
    const used = await this.lastUsed.read(page.flatMap((k) => hashOf(k) ?? []));
    const plan = await this.planLimits(account);
    const rows = page.map((k): KeyRow => {
      const a = k.metadata.annotations ?? {};
      const revoked = k.spec.revoked === true || k.status?.state === 'Revoked';
      const revokeAt = a[REVOKE_AT] && !revoked ? Date.parse(a[REVOKE_AT]) : NaN;
      const h = hashOf(k);
      // The operator's status has the expiry the gateways enforce (keyPolicy.maxKeyAgeDays may make it earlier).
      const exp = Date.parse(k.status?.expiresAt ?? k.spec.expiresAt ?? '');
      const expiresAt = Number.isNaN(exp) ? null : exp;
      return {
        name: keyNameOf(k),
        account,
        display: k.status?.displayedKey ?? k.spec.displayedKey ?? 'sk-svc-…',
        state: revoked ? 'Revoked' : isExpired(expiresAt, now) ? 'Expired' : 'Active',
        createdAt: iso(k.metadata.creationTimestamp),
        createdBy: a[CREATED_BY] ?? null,
        lastUsedAt: h ? (used.get(h) ?? null) : null,
        // The operator's spend refresh writes "12.34" (older versions a number); to the cent either way.
        monthSpendNano: usdToNano(Number(k.status?.monthSpendUsd ?? 0) || 0),
        monthlyBudgetNano: k.spec.monthlyBudgetUsd === undefined ? null : usdToNano(k.spec.monthlyBudgetUsd),
        rpm: minLimit(k.spec.limits?.rpm ?? null, plan.rpm),
        tpm: minLimit(k.spec.limits?.tpm ?? null, plan.tpm),
        models: k.spec.models ?? null,
        revokeAt: Number.isNaN(revokeAt) ? null : revokeAt,
        expiresAt,
      };
    });
    return { rows, total: all.length };
  }

  /** Revokes the keys whose rotation grace period has ended (on every listing, and periodically). */
  async sweep(keys: ApiKeyObject[] | null, now: number): Promise<void> {
    for (const k of keys ?? ((await this.c.custom.listNamespacedCustomObject(ref(this.c, 'apikeys'))) as { items: ApiKeyObject[] }).items) {
      const at = k.metadata.annotations?.[REVOKE_AT];
      if (!at || k.spec.revoked || Date.parse(at) > now) continue;
      await this.patchRevoked(k, k.metadata.annotations?.[REVOKED_BY] ?? 'rotation', `at the end of a rotation's grace period`);
      k.spec.revoked = true;
    }
  }

  async create(account: string, spec: KeySpec, by: KeyActor, now: number): Promise<CreatedKey> {
    const actor = actorName(by);
    const taken = async (): Promise<boolean> => (await this.keysOf(account)).some((k) => keyNameOf(k) === spec.name);
    const duplicate = (): KeyActionError => new KeyActionError(`This account already has a key named ${spec.name}.`, 'name');
    if (await taken()) throw duplicate();
    const key = generateKey();
    let made: ApiKeyObject | null = null;
    for (let attempt = 0; made === null; attempt++) {
      const body = this.body(apiKeyObjectName(account, spec.name, attempt), account, spec, key, by);
      try {
        made = (await this.c.custom.createNamespacedCustomObject({ ...ref(this.c, 'apikeys'), body, fieldManager: FIELD_MANAGER })) as ApiKeyObject;
      } catch (err) {
        if (statusOf(err) !== 409 || attempt >= 2) throw kubeRefusal(err, spec.name);
        // The object name is taken: by this account's own key of that name made meanwhile (say so), else by an
        // object made some other way (step around it, unsaid: it may be another account's).
        if (await taken()) throw duplicate();
      }
    }
    await this.event(made, 'KeyCreated', 'Create', `Key ${displayKey(key)} created in the console by ${actor}.`);
    const plan = await this.planLimits(account);
    return {
      key,
      row: {
        name: spec.name,
        account,
        display: displayKey(key),
        state: 'Active',
        createdAt: new Date(now).toISOString(),
        createdBy: actor,
        lastUsedAt: null,
        monthSpendNano: 0,
        monthlyBudgetNano: spec.monthlyBudgetNano,
        rpm: minLimit(spec.rpm, plan.rpm),
        tpm: minLimit(spec.tpm, plan.tpm),
        models: spec.models,
        revokeAt: null,
        expiresAt: spec.expiresAt,
      },
    };
  }

  private body(objectName: string, account: string, spec: KeySpec, key: string, by: KeyActor): ApiKeyObject & { apiVersion: string; kind: string } {
    // The groups let the operator's offboarding check ask about the owner as the sign-in saw them.
    const owner: Record<string, string> = typeof by === 'string' ? {} : { [CREATED_BY_GROUPS]: JSON.stringify(by.groups.slice(0, MAX_RECORDED_GROUPS)) };
    return {
      apiVersion: API_VERSION,
      kind: 'ApiKey',
      metadata: { name: objectName, labels: { [ACCOUNT_LABEL]: account }, annotations: { [CREATED_BY]: actorName(by), ...owner } },
      spec: {
        accountRef: account,
        displayName: spec.name,
        keyHash: hashKey(key, this.pepper),
        displayedKey: displayKey(key),
        ...(spec.monthlyBudgetNano === null ? {} : { monthlyBudgetUsd: nanoToUsd(spec.monthlyBudgetNano) }),
        ...(spec.rpm === null && spec.tpm === null
          ? {}
          : { limits: { ...(spec.rpm === null ? {} : { rpm: spec.rpm }), ...(spec.tpm === null ? {} : { tpm: spec.tpm }) } }),
        ...(spec.models === null ? {} : { models: spec.models }),
        ...(spec.expiresAt === null ? {} : { expiresAt: rfc3339(spec.expiresAt) }),
      },
    };
  }

  /** The account's key of that name, found among the account's own keys (the name never becomes an API path). */
  private async get(account: string, name: string): Promise<ApiKeyObject> {
    if (!isKeyName(name)) throw new KeyActionError(`"${name}" is not a key name.`, null, 'bad-name');
    const found = (await this.keysOf(account)).filter((k) => keyNameOf(k) === name);
    if (found.length > 1) {
      const objects = found.map((k) => k.metadata.name).join(', ');
      throw new KeyActionError(`Account ${account} has several keys named ${name} (ApiKeys ${objects}): change them with kubectl.`, null, 'conflict');
    }
    const k = found[0];
    if (!k) throw new KeyActionError(`There is no key ${name} in account ${account}.`, null, 'not-found');
    return k;
  }

  private async patchRevoked(k: ApiKeyObject, actor: string, why: string): Promise<void> {
    await this.c.custom
      .patchNamespacedCustomObject(
        {
          ...ref(this.c, 'apikeys'),
          name: k.metadata.name,
          fieldManager: FIELD_MANAGER,
          body: { metadata: { annotations: { [REVOKED_BY]: actor } }, spec: { revoked: true } },
        },
        MERGE,
      )
      .catch((err: unknown) => {
        throw kubeRefusal(err, keyNameOf(k));
      });
    await this.event(k, 'KeyRevoked', 'Revoke', `Key revoked in the console by ${actor}${why ? ` ${why}` : ''}.`);
  }

  async expectKey(account: string, name: string): Promise<void> {
    await this.get(account, name);
  }

  async revoke(account: string, name: string, actor: string): Promise<void> {
    await this.patchRevoked(await this.get(account, name), actor, '');
  }

  async rotate(account: string, name: string, graceMs: number, by: KeyActor, now: number): Promise<CreatedKey> {
    const actor = actorName(by);
    const old = await this.get(account, name);
    if (old.spec.revoked) throw new KeyActionError(`Key ${name} is revoked already; create a new key instead.`, null, 'conflict');
    const pending = old.metadata?.annotations?.[REVOKE_AT];
    // Rotated once already: a second rotation would make a second successor (a browser re-sending the form on reload).
    if (pending) {
      throw new KeyActionError(`Key ${name} is being rotated already (it is revoked at ${pending}); rotate its successor instead.`, null, 'conflict');
    }
    // Names are the account's own: no other account's keys (nor any object name) can take the successor's.
    const taken = new Set((await this.keysOf(account)).map(keyNameOf));
    const s = old.spec;
    const oldExpiry = Date.parse(old.status?.expiresAt ?? s.expiresAt ?? '');
    const expiresAt = Number.isNaN(oldExpiry) ? null : oldExpiry;
    const created = await this.create(
      account,
      {
        name: rotatedName(name, taken),
        monthlyBudgetNano: s.monthlyBudgetUsd === undefined ? null : usdToNano(s.monthlyBudgetUsd),
        rpm: s.limits?.rpm ?? null,
        tpm: s.limits?.tpm ?? null,
        models: s.models ?? null,
        expiresAt: successorExpiry(
          { expiresAt, createdAt: Date.parse(iso(old.metadata.creationTimestamp) ?? '') || null },
          (await this.planLimits(account)).keyPolicy,
          now,
        ),
      },
      by,
      now,
    );
    const stops = rotatedKeyStops(now, graceMs, expiresAt);
    if (graceMs <= 0 || stops <= now) {
      await this.patchRevoked(old, actor, `(rotated to ${created.row.name})`);
    } else {
      // The grace period, or the key's own expiry if that comes first: the earlier wins.
      const at = new Date(stops).toISOString();
      await this.c.custom
        .patchNamespacedCustomObject(
          {
            ...ref(this.c, 'apikeys'),
            name: old.metadata.name,
            fieldManager: FIELD_MANAGER,
            body: { metadata: { annotations: { [REVOKE_AT]: at, [REVOKED_BY]: actor } } },
          },
          MERGE,
        )
        .catch((err: unknown) => {
          throw kubeRefusal(err, name);
        });
      await this.event(old, 'KeyRotated', 'Rotate', `Key rotated to ${created.row.name} in the console by ${actor}; revoked at ${at}.`);
    }
    return { ...created, previousStopsAt: Math.max(now, stops) };
  }

  /** Best effort, as the operator's Events: a missing Event never fails the action. */
  private async event(k: ApiKeyObject, reason: string, action: string, message: string): Promise<void> {
    const now = new Date();
    const body: CoreV1Event = {
      metadata: { name: `${k.metadata.name}.${now.getTime().toString(16)}${randomBytes(2).toString('hex')}`, namespace: this.c.namespace },
      involvedObject: { apiVersion: API_VERSION, kind: 'ApiKey', name: k.metadata.name, namespace: this.c.namespace, uid: k.metadata.uid },
      type: 'Normal',
      reason,
      action,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: FIELD_MANAGER },
      reportingComponent: FIELD_MANAGER,
      reportingInstance: process.env.HOSTNAME ?? 'console',
    };
    await this.c.core.createNamespacedEvent({ namespace: this.c.namespace, body }).catch(() => {});
  }
}

/** spec.selfService as written (USD) to the compiled form (nano-USD). */
function capsOf(c: { maxBudgetUsd?: number; models?: string[]; maxKeysPerPerson?: number } | undefined): CompiledSelfService | undefined {
  if (!c) return undefined;
  return {
    ...(c.maxBudgetUsd === undefined ? {} : { maxBudgetNano: usdToNano(c.maxBudgetUsd) }),
    ...(c.models === undefined ? {} : { models: c.models }),
    ...(c.maxKeysPerPerson === undefined ? {} : { maxKeysPerPerson: c.maxKeysPerPerson }),
  };
}

function minLimit(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}
