// Deleting an ApiKey revokes its key in Redis before the object goes (a tombstone no later write undoes), so an old
// manifest or a leftover Secret can never bring the key back. The key's HMAC is also kept in an annotation: with
// foreground deletion the garbage collector may delete the key's Secret before the finalizer runs.
import { displayKey, hashKey } from '../../gateway/contract/keys.ts';
import type { CustomObject } from '../kube/clients.ts';
import { patchMetadata } from '../kube/patch.ts';
import { keySecretName } from '../../crds/schema/index.ts';
import { currentKey } from './api-key-secret.ts';
import { objectKey, type ControllerContext } from './context.ts';

export const FINALIZER = 'gateway.svc.dev/revoke-key';
/** HMAC-SHA-256 of the key under the pepper: useless without the pepper, and never the key itself. */
export const KEY_HMAC_ANNOTATION = 'gateway.svc.dev/key-hmac';

export function hasFinalizer(obj: CustomObject): boolean {
  return obj.metadata?.finalizers?.includes(FINALIZER) ?? false;
}

/**
 * Adds the finalizer, and with `hmac` the HMAC of the key about to be generated (one write instead of two for each
 * new key); returns the object as the API server now has it.
 */
export async function addFinalizer(ctx: ControllerContext, obj: CustomObject, hmac?: string): Promise<CustomObject> {
  const finalizers = [...(obj.metadata?.finalizers ?? []), FINALIZER];
  const annotations = hmac ? { annotations: { [KEY_HMAC_ANNOTATION]: hmac } } : {};
  return patchMetadata(ctx.clients, 'ApiKey', obj.metadata?.name ?? '', obj.metadata?.resourceVersion ?? '', { finalizers, ...annotations });
}

export async function recordKeyHmac(ctx: ControllerContext, obj: CustomObject, hmac: string): Promise<void> {
  await patchMetadata(ctx.clients, 'ApiKey', obj.metadata?.name ?? '', obj.metadata?.resourceVersion ?? '', { annotations: { [KEY_HMAC_ANNOTATION]: hmac } });
}

export async function finalize(ctx: ControllerContext, obj: CustomObject): Promise<void> {
  if (!hasFinalizer(obj)) return;
  const name = obj.metadata?.name ?? '';
  const spec = obj.spec as { secretName?: string; keyHash?: string } | undefined;
  const key = spec?.keyHash ? undefined : await currentKey(ctx, keySecretName(name, spec?.secretName));
  const hmacs = new Set<string>();
  if (key) hmacs.add(hashKey(key, ctx.pepper));
  if (spec?.keyHash && /^[0-9a-f]{64}$/.test(spec.keyHash)) hmacs.add(spec.keyHash);
  const noted = obj.metadata?.annotations?.[KEY_HMAC_ANNOTATION];
  if (noted && /^[0-9a-f]{64}$/.test(noted)) hmacs.add(noted);
  for (const h of hmacs) await ctx.store.revoke(h);
  if (hmacs.size > 0) {
    const shown = key ? displayKey(key) : 'of the ApiKey';
    ctx.log.info('Revoked key of deleted ApiKey', { ApiKey: objectKey(ctx, name) });
    await ctx.events.record(obj, { type: 'Normal', reason: 'KeyRevoked', action: 'Delete', message: `Revoked key ${shown} before deletion.` });
  }
  const finalizers = (obj.metadata?.finalizers ?? []).filter((f) => f !== FINALIZER);
  await patchMetadata(ctx.clients, 'ApiKey', name, obj.metadata?.resourceVersion ?? '', { finalizers });
}
