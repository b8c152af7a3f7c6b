// The key of an ApiKey lives in a Secret (data key `key`): a well-formed key already there is used (GitOps, sealed
// secrets); otherwise the operator generates one. Generation can never make two keys for one ApiKey: the Secret
// name is fixed, creation fails with 409 if any writer got there first (then its key is read and used), and a key
// added to an existing Secret is written with that Secret's resourceVersion as a precondition.
import { PatchStrategy, setHeaderOptions, type V1Secret } from '@kubernetes/client-node';
import { API_VERSION } from '../../crds/schema/common.ts';
import { generateKey, isWellFormedKey } from '../../gateway/contract/keys.ts';
import { statusOf, type CustomObject } from '../kube/clients.ts';
import { COMPONENT } from '../kube/events.ts';
import type { ControllerContext } from './context.ts';
import { secretValue } from './parse.ts';

export const SECRET_DATA_KEY = 'key';

export type KeyState =
  | { kind: 'key'; key: string; generated: boolean }
  | { kind: 'malformed' }
  /** No key and none wanted (a revoked key is never generated). */
  | { kind: 'none' }
  /** A key made in the console: the ApiKey carries only its HMAC (spec.keyHash); no Secret is read or written. */
  | { kind: 'hashed'; hmac: string; display: string };

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

function stateOf(secret: V1Secret): KeyState | null {
  const key = secretValue(secret, SECRET_DATA_KEY);
  if (key === undefined || key === '') return null;
  return isWellFormedKey(key) ? { kind: 'key', key, generated: false } : { kind: 'malformed' };
}

/** The Secret as the cache has it, else as the API server has it (the cache may not have seen our own write yet). */
async function readSecret(ctx: ControllerContext, name: string): Promise<V1Secret | undefined> {
  const cached = ctx.caches.Secret.get(name);
  if (cached) return cached;
  try {
    return await ctx.clients.core.readNamespacedSecret({ name, namespace: ctx.clients.namespace });
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

async function createKeySecret(ctx: ControllerContext, owner: CustomObject, secretName: string, key: string): Promise<KeyState> {
  const { core, namespace } = ctx.clients;
  const name = owner.metadata?.name ?? '';
  const body: V1Secret = {
    metadata: {
      name: secretName,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': COMPONENT, 'gateway.svc.dev/apikey': name },
      // Owned by the ApiKey: the garbage collector deletes it with the ApiKey.
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'ApiKey', name, uid: owner.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    type: 'Opaque',
    data: { [SECRET_DATA_KEY]: b64(key) },
  };
  try {
    await core.createNamespacedSecret({ namespace, body });
    return { kind: 'key', key, generated: true };
  } catch (err) {
    if (statusOf(err) !== 409) throw err;
    // Someone (our previous life, killed mid-reconcile) created it first: its key is the key.
    const existing = await core.readNamespacedSecret({ name: secretName, namespace });
    return stateOf(existing) ?? addKey(ctx, existing);
  }
}

/** A Secret that exists without a key gets one, only if nobody changed it since we read it (409 otherwise). */
async function addKey(ctx: ControllerContext, secret: V1Secret): Promise<KeyState> {
  const key = generateKey();
  await ctx.clients.core.patchNamespacedSecret(
    {
      name: secret.metadata?.name ?? '',
      namespace: ctx.clients.namespace,
      body: { metadata: { resourceVersion: secret.metadata?.resourceVersion }, data: { [SECRET_DATA_KEY]: b64(key) } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  return { kind: 'key', key, generated: true };
}

/**
 * Finds the ApiKey's key, generating it if there is none and the key is not revoked: `generated`, when the caller
 * already made the key it would write (and recorded its HMAC).
 */
export async function ensureKey(ctx: ControllerContext, owner: CustomObject, secretName: string, revoked: boolean, generated?: string): Promise<KeyState> {
  // Not in the (synced) cache and a key wanted: create it straight away. One the cache has not seen yet makes the
  // create fail with 409, and its key is read and used then (what reading it first would have found).
  if (!revoked && !ctx.caches.Secret.get(secretName)) return createKeySecret(ctx, owner, secretName, generated ?? generateKey());
  const secret = await readSecret(ctx, secretName);
  const found = secret ? stateOf(secret) : null;
  if (found || revoked) return found ?? { kind: 'none' };
  return secret ? addKey(ctx, secret) : createKeySecret(ctx, owner, secretName, generated ?? generateKey());
}

/** The key currently in the Secret, without generating anything (deletion). */
export async function currentKey(ctx: ControllerContext, secretName: string): Promise<string | undefined> {
  const secret = await readSecret(ctx, secretName);
  const s = secret ? stateOf(secret) : null;
  return s?.kind === 'key' ? s.key : undefined;
}
