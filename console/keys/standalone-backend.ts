// Keys in standalone mode: the manifests' keys plus those made in the console, in the same store the gateway reads.
// A key made here is stored only as its HMAC (KeyRecord); the full key is returned once, to the dialog.
import { displayKey, generateKey, hashKey } from '../../gateway/contract/keys.ts';
import type { KeyRecord, Snapshot } from '../../gateway/contract/snapshot.ts';
import type { LastUsed } from '../../gateway/state/last-used.ts';
import type { Store, StoreAdmin } from '../../gateway/state/store.ts';
import { mergePolicies } from './self-service-policy.ts';
import { actorName, KeyActionError, type CreatedKey, type KeyActor, type KeyBackend, type KeyPage, type KeyRow } from './backend.ts';
import type { KeySpec, PlanLimits } from './key-spec.ts';
import type { KeyPublisher } from './publisher.ts';
import type { KeyEntry, KeyRegistry } from './registry.ts';
import { isExpired } from '../../gateway/contract/key-expiry.ts';
import { rotatedKeyStops, successorExpiry } from './lifetime.ts';
import { rotatedName } from './rotated-name.ts';
import { isKeyName } from './key-name.ts';

export interface StandaloneKeysOptions {
  snapshot: Snapshot;
  configKeys: KeyRecord[];
  pepper: string;
  store: Store & StoreAdmin;
  publisher: KeyPublisher;
  registry: KeyRegistry;
  lastUsed: LastUsed;
}

interface Known {
  record: KeyRecord;
  entry: KeyEntry | null;
}

function minLimit(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

export class StandaloneKeys implements KeyBackend {
  private readonly o: StandaloneKeysOptions;

  constructor(o: StandaloneKeysOptions) {
    this.o = o;
  }

  /** Puts the console's keys back into the store and applies revocations that are due (at start, then periodically). */
  async restore(now: number): Promise<void> {
    for (const e of await this.o.registry.all()) {
      if (e.origin === 'console' && e.record) await this.o.publisher.publish(e.record);
      if (e.revokedAt !== null) await this.o.publisher.revoke(e.hash);
    }
    await this.sweep(now);
  }

  /** Revokes the keys whose rotation grace period has ended. */
  async sweep(now: number): Promise<void> {
    for (const e of await this.o.registry.all()) {
      if (e.revokeAt === null || e.revokedAt !== null || e.revokeAt > now) continue;
      await this.o.publisher.revoke(e.hash);
      await this.o.registry.put({ ...e, revokedAt: e.revokeAt });
    }
  }

  async accounts(): Promise<string[]> {
    return Object.keys(this.o.snapshot.accounts).sort();
  }

  async planLimits(account: string): Promise<PlanLimits> {
    const a = this.o.snapshot.accounts[account];
    const plan = a ? this.o.snapshot.plans[a.plan] : undefined;
    const selfService = plan?.selfService || a?.selfService ? { selfService: mergePolicies(plan?.selfService, a?.selfService) } : {};
    return { rpm: plan?.rpm ?? null, tpm: plan?.tpm ?? null, keyPolicy: a?.keyPolicy ?? null, ...selfService };
  }

  private async known(account: string): Promise<Known[]> {
    const entries = (await this.o.registry.all()).filter((e) => e.account === account);
    const byName = new Map(entries.map((e) => [e.name, e]));
    const out: Known[] = this.o.configKeys.filter((k) => k.account === account).map((record) => ({ record, entry: byName.get(record.name) ?? null }));
    for (const e of entries) if (e.origin === 'console' && e.record) out.push({ record: e.record, entry: e });
    return out.sort((a, b) => (a.record.name < b.record.name ? -1 : 1));
  }

  async list(account: string, offset: number, limit: number, now: number): Promise<KeyPage> {
    await this.sweep(now);
    const all = await this.known(account);
    const page = all.slice(offset, offset + limit);
    const used = await this.o.lastUsed.read(page.map((k) => k.record.hash));
    const rows = await Promise.all(
      page.map(async ({ record, entry }): Promise<KeyRow> => {
        const current = await this.o.store.findKey(record.hash);
        const view = await this.o.store.view(account, record.name, now);
        return {
          name: record.name,
          account,
          display: record.display,
          state: current?.revoked || record.revoked || entry?.revokedAt != null ? 'Revoked' : isExpired(record.expiresAt, now) ? 'Expired' : 'Active',
          createdAt: entry?.createdAt ?? null,
          lastUsedAt: used.get(record.hash) ?? null,
          monthSpendNano: view.keyMonthSpendNano,
          monthlyBudgetNano: record.monthlyBudgetNano,
          rpm: record.rpm,
          tpm: record.tpm,
          models: record.models,
          revokeAt: entry?.revokedAt == null ? (entry?.revokeAt ?? null) : null,
          createdBy: entry?.createdBy ?? null,
          expiresAt: record.expiresAt ?? null,
        };
      }),
    );
    return { rows, total: all.length };
  }

  async create(account: string, spec: KeySpec, by: KeyActor, now: number): Promise<CreatedKey> {
    const actor = actorName(by);
    if (!this.o.snapshot.accounts[account]) throw new KeyActionError(`There is no account ${account}.`, null, 'not-found');
    const names = new Set((await this.known(account)).map((k) => k.record.name));
    if (names.has(spec.name)) throw new KeyActionError(`This account already has a key named ${spec.name}.`, 'name');
    const plan = await this.planLimits(account);
    const key = generateKey();
    const record: KeyRecord = {
      hash: hashKey(key, this.o.pepper),
      name: spec.name,
      display: displayKey(key),
      account,
      monthlyBudgetNano: spec.monthlyBudgetNano,
      rpm: minLimit(spec.rpm, plan.rpm),
      tpm: minLimit(spec.tpm, plan.tpm),
      models: spec.models,
      revoked: false,
      ...(spec.expiresAt === null ? {} : { expiresAt: spec.expiresAt }),
      createdAt: now,
    };
    const createdAt = new Date(now).toISOString();
    await this.o.registry.put({
      account,
      name: spec.name,
      hash: record.hash,
      origin: 'console',
      record,
      createdAt,
      createdBy: actor,
      revokeAt: null,
      revokedAt: null,
      revokedBy: null,
    });
    await this.o.publisher.publish(record);
    const row: KeyRow = {
      name: record.name,
      account,
      display: record.display,
      state: 'Active',
      createdAt,
      lastUsedAt: null,
      monthSpendNano: 0,
      monthlyBudgetNano: record.monthlyBudgetNano,
      rpm: record.rpm,
      tpm: record.tpm,
      models: record.models,
      revokeAt: null,
      createdBy: actor,
      expiresAt: spec.expiresAt,
    };
    return { key, row };
  }

  private async find(account: string, name: string): Promise<Known> {
    if (!isKeyName(name)) throw new KeyActionError(`"${name}" is not a key name.`, null, 'bad-name');
    const k = (await this.known(account)).find((x) => x.record.name === name);
    if (!k) throw new KeyActionError(`There is no key ${name} in account ${account}.`, null, 'not-found');
    return k;
  }

  private entryOf(k: Known): KeyEntry {
    return (
      k.entry ?? {
        account: k.record.account,
        name: k.record.name,
        hash: k.record.hash,
        origin: 'config',
        record: null,
        createdAt: null,
        createdBy: null,
        revokeAt: null,
        revokedAt: null,
        revokedBy: null,
      }
    );
  }

  async expectKey(account: string, name: string): Promise<void> {
    await this.find(account, name);
  }

  async revoke(account: string, name: string, actor: string, now: number): Promise<void> {
    const k = await this.find(account, name);
    // Recorded first: a crash between the two steps is completed by restore() at the next start.
    await this.o.registry.put({ ...this.entryOf(k), revokedAt: now, revokedBy: actor });
    await this.o.publisher.revoke(k.record.hash);
  }

  async rotate(account: string, name: string, graceMs: number, by: KeyActor, now: number): Promise<CreatedKey> {
    const actor = actorName(by);
    const old = await this.find(account, name);
    if (old.record.revoked || old.entry?.revokedAt != null)
      throw new KeyActionError(`Key ${name} is revoked already; create a new key instead.`, null, 'conflict');
    // Rotated once already (its revocation is pending): a second rotation would make a second successor, e.g. when a
    // browser re-sends the rotate form on reload.
    if (old.entry?.revokeAt != null)
      throw new KeyActionError(
        `Key ${name} is being rotated already (it is revoked at ${new Date(old.entry.revokeAt).toISOString()}); rotate its successor instead.`,
        null,
        'conflict',
      );
    const names = new Set((await this.known(account)).map((k) => k.record.name));
    const r = old.record;
    const created = await this.create(
      account,
      {
        name: rotatedName(name, names),
        monthlyBudgetNano: r.monthlyBudgetNano,
        rpm: r.rpm,
        tpm: r.tpm,
        models: r.models,
        expiresAt: successorExpiry(
          { expiresAt: r.expiresAt ?? null, createdAt: r.createdAt ?? (Date.parse(old.entry?.createdAt ?? '') || null) },
          (await this.planLimits(account)).keyPolicy,
          now,
        ),
      },
      actor,
      now,
    );
    // The grace period, or the key's own expiry if that comes first: the earlier wins.
    const stops = rotatedKeyStops(now, graceMs, r.expiresAt ?? null);
    if (graceMs <= 0 || stops <= now) await this.revoke(account, name, actor, now);
    else await this.o.registry.put({ ...this.entryOf(old), revokeAt: stops, revokedBy: actor });
    return { ...created, previousStopsAt: Math.max(now, stops) };
  }
}
