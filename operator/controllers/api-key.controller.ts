// ApiKey: a finalizer first (so no key reaches Redis that deletion could miss), then the key (found in its Secret
// or generated there), revocation in Redis when spec.revoked is set (irreversible), and a status that shows only
// the displayed form of the key. Deletion revokes the key in Redis before the finalizer is removed.
import { displayKey, generateKey, hashKey, KEY_PREFIX } from '../../gateway/contract/keys.ts';
import { keySecretName, type ApiKey } from '../../crds/schema/index.ts';
import type { KeyRecord } from '../../gateway/contract/snapshot.ts';
import type { CustomObject } from '../kube/clients.ts';
import type { Outcome } from '../queue/work-queue.ts';
import { ensureKey, SECRET_DATA_KEY, type KeyState } from './api-key-secret.ts';
import { addFinalizer, finalize, hasFinalizer, KEY_HMAC_ANNOTATION, recordKeyHmac } from './api-key-finalizer.ts';
import type { Verdict } from './conditions.ts';
import { isDeleting, objectKey, type ControllerContext, type Reconciler } from './context.ts';
import { compiledKey } from './compiled.ts';
import { parseCr, secretValue } from './parse.ts';
import { daysLeft, expiryView, type ExpiryView } from './key-expiry.ts';
import { writeStatus } from './status.ts';

function expiredVerdict(at: string | null): Verdict {
  return { ready: false, reason: 'Expired', message: `The key expired at ${at}: every gateway answers 401 key_expired. Rotate it: create a new ApiKey.` };
}

/** While a new key travels to Redis (through the config controller), look again this soon. */
const PUBLISH_RECHECK_MS = 250;

export class ApiKeyController implements Reconciler {
  readonly kind = 'ApiKey' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<Outcome | void> {
    const cached = this.ctx.caches.ApiKey.get(name);
    if (!cached) return;
    if (isDeleting(cached)) return finalize(this.ctx, cached);
    // Before any key exists; then on with the object the patch returned (the cache has not seen it yet). A key to be
    // generated is made first, so that the same write records its HMAC (kept for deletion).
    const fresh = hasFinalizer(cached) ? undefined : this.keyToGenerate(cached, name);
    const obj = hasFinalizer(cached) ? cached : await addFinalizer(this.ctx, cached, fresh && hashKey(fresh, this.ctx.pepper));
    const parsed = parseCr('ApiKey', obj);
    if (!parsed.ok) return writeStatus(this.ctx, 'ApiKey', obj, { ready: false, reason: 'InvalidSpec', message: parsed.message });
    const spec = parsed.value.spec;
    const secretName = keySecretName(name, spec.secretName);
    const state: KeyState = spec.keyHash
      ? { kind: 'hashed', hmac: spec.keyHash, display: spec.displayedKey ?? `${KEY_PREFIX}…` }
      : await ensureKey(this.ctx, obj, secretName, spec.revoked, fresh);
    if (state.kind === 'key' || state.kind === 'hashed') await this.published(obj, state, secretName);
    const hmac = hmacOf(state, this.ctx.pepper);
    const record = hmac ? await this.ctx.store.findKey(hmac) : null;
    const judged = this.verdict(name, state, record, secretName);
    if (!judged) return;
    const revoked = parsed.value.spec.revoked || record?.revoked === true;
    const expiry = expiryView(revoked ? null : judged.expiresAt, this.ctx.now().getTime());
    const verdict = expiry.expired && judged.verdict.ready ? expiredVerdict(expiry.expiresAt) : judged.verdict;
    const fields = this.fields(obj, parsed.value, state, record, secretName);
    await this.warnExpiring(obj, expiry, judged.expiresAt);
    await writeStatus(this.ctx, 'ApiKey', obj, verdict, {
      ...fields,
      state: fields.state === 'Active' && expiry.expired ? 'Expired' : fields.state,
      expiresAt: expiry.expiresAt,
      expiringSoon: expiry.soon || null,
    });
    if (judged.requeue) return { requeueAfterMs: PUBLISH_RECHECK_MS };
    // Level-based, but time moves: look again when the key turns "expiring soon" or expires.
    return expiry.recheckMs === null ? undefined : { requeueAfterMs: Math.max(PUBLISH_RECHECK_MS, expiry.recheckMs) };
  }

  /** The key a new ApiKey will be given: one with a valid spec, no keyHash, not revoked, and no Secret yet. */
  private keyToGenerate(obj: CustomObject, name: string): string | undefined {
    const parsed = parseCr('ApiKey', obj);
    if (!parsed.ok || parsed.value.spec.keyHash || parsed.value.spec.revoked) return undefined;
    return this.ctx.caches.Secret.get(keySecretName(name, parsed.value.spec.secretName)) ? undefined : generateKey();
  }

  /** One Event when the key enters its last 14 days (status.expiringSoon remembers that it was recorded). */
  private async warnExpiring(obj: CustomObject, expiry: ExpiryView, expiresAt: number | null): Promise<void> {
    if (!expiry.soon || expiresAt === null || (obj.status as { expiringSoon?: boolean } | undefined)?.expiringSoon === true) return;
    const when = daysLeft(expiresAt, this.ctx.now().getTime());
    this.ctx.log.info('Key expiring soon', { ApiKey: objectKey(this.ctx, obj.metadata?.name ?? ''), expiresAt: expiry.expiresAt });
    await this.ctx.events.record(obj, {
      type: 'Warning',
      reason: 'KeyExpiringSoon',
      action: 'Expire',
      message: `The key expires at ${expiry.expiresAt} (${when}): rotate it before then; from that second every gateway answers 401 key_expired.`,
    });
  }

  /** Events and Redis effects of a known key: generated, revoked (idempotent), its HMAC kept for deletion. */
  private async published(obj: CustomObject, state: Extract<KeyState, { kind: 'key' | 'hashed' }>, secretName: string): Promise<void> {
    const { ctx } = this;
    const hmac = hmacOf(state, ctx.pepper) as string;
    const shown = displayOf(state) as string;
    const ref = objectKey(ctx, obj.metadata?.name ?? '');
    if (state.kind === 'key' && state.generated) {
      ctx.log.info('Generated key', { ApiKey: ref, Secret: secretName, key: displayKey(state.key) });
      await ctx.events.record(obj, {
        type: 'Normal',
        reason: 'KeyGenerated',
        action: 'Generate',
        message: `Generated key ${displayKey(state.key)} into Secret ${secretName}.`,
      });
    }
    if (obj.metadata?.annotations?.[KEY_HMAC_ANNOTATION] !== hmac) await recordKeyHmac(ctx, obj, hmac);
    const spec = obj.spec as { revoked?: boolean } | undefined;
    if (!spec?.revoked) return;
    await ctx.store.revoke(hmac);
    if (obj.status?.state !== 'Revoked') {
      ctx.log.info('Revoked key', { ApiKey: ref, key: shown });
      await ctx.events.record(obj, { type: 'Normal', reason: 'KeyRevoked', action: 'Revoke', message: `Revoked key ${shown} in every gateway.` });
    }
  }

  /**
   * The compiler's verdict; once it says the key is served, what Redis holds: a record revoked before (revocation is
   * irreversible) or none yet (the config controller is publishing it).
   */
  private verdict(
    name: string,
    state: KeyState,
    record: KeyRecord | null,
    secretName: string,
  ): { verdict: Verdict; requeue: boolean; expiresAt: number | null } | null {
    const cachedKey = secretValue(this.ctx.caches.Secret.get(secretName), SECRET_DATA_KEY);
    const result = compiledKey(this.ctx, name, state.kind === 'key' && cachedKey !== state.key ? state.key : null);
    const v = result.verdicts.apiKeys[name];
    if (!v) return null;
    const expiresAt = result.keys.find((k) => k.name === name)?.expiresAt ?? null;
    const judged = this.judge(v, record, secretName);
    return judged && { ...judged, expiresAt };
  }

  private judge(v: Verdict, record: KeyRecord | null, secretName: string): { verdict: Verdict; requeue: boolean } | null {
    if (!v.ready || v.reason === 'Revoked') return { verdict: v, requeue: false };
    if (record?.revoked) {
      return {
        verdict: {
          ready: false,
          reason: 'KeyRevokedBefore',
          message: `The key in Secret ${secretName} was revoked before, and revocation is irreversible: put a new key there, or delete the Secret to have one generated.`,
        },
        requeue: false,
      };
    }
    if (!record) return { verdict: { ready: false, reason: 'Publishing', message: 'The key is on its way to the gateways.' }, requeue: true };
    return { verdict: { ready: true, reason: 'Active', message: v.message }, requeue: false };
  }

  /** Spend and budget in status come from the leader's spend refresh (spend-status.ts), not from here. */
  private fields(obj: CustomObject, k: ApiKey, state: KeyState, record: KeyRecord | null, secretName: string): Record<string, unknown> {
    const status = obj.status ?? {};
    const revoked = k.spec.revoked || record?.revoked === true;
    const known = state.kind === 'key' || state.kind === 'hashed';
    return {
      state: revoked ? 'Revoked' : known ? 'Active' : null,
      // A revoked key whose Secret is gone keeps the display it had.
      displayedKey: displayOf(state) ?? status.displayedKey ?? null,
      secretName: state.kind === 'hashed' ? null : secretName,
      revokedAt: revoked
        ? (status.revokedAt ??
          this.ctx
            .now()
            .toISOString()
            .replace(/\.\d+Z$/, 'Z'))
        : null,
    };
  }
}

/** The HMAC the gateways know the key by (none while there is no key). */
function hmacOf(state: KeyState, pepper: string): string | null {
  if (state.kind === 'key') return hashKey(state.key, pepper);
  return state.kind === 'hashed' ? state.hmac : null;
}

function displayOf(state: KeyState): string | null {
  if (state.kind === 'key') return displayKey(state.key);
  return state.kind === 'hashed' ? state.display : null;
}
