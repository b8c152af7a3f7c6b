// One compile of the namespace, shared: the config controller publishes its snapshot and keys, and every other
// controller renders its verdicts into status, so a status says exactly what the gateways were given. Compiled
// again only after forgetCompiled(), which the manager calls on every informer change before it enqueues any work
// (a resync of N objects would otherwise compile N times). The verdicts of Plans, Accounts, ModelRoutes, McpServers
// and Guardrails, and the snapshot, do not depend on the ApiKeys: they come from a compile without them, which a
// change of an ApiKey or of its Secret keeps (a resync writes one Secret per key: with 10,000 keys and 2,000
// routes, each route's reconcile would otherwise compile every key again).
import { compile, type CompileOptions, type CompileResult } from '../../gateway/contract/compile.ts';
import { hashKey } from '../../gateway/contract/keys.ts';
import type { Caches, ControllerContext } from './context.ts';
import { keyManifestSet, manifestSetFrom } from './manifest-set.ts';

interface Memo {
  result: CompileResult | null;
  objects: CompileResult | null;
  /** HMACs of the keys compiled (one HMAC per key per compile was most of a compile of 10,000 keys). */
  hashes: Map<string, string>;
}

/** Past this many remembered HMACs (keys rotated away), the memo starts over. */
const MAX_HASHES = 200_000;

const memos = new WeakMap<Caches, Memo>();

function memoOf(caches: Caches): Memo {
  let memo = memos.get(caches);
  if (!memo) memos.set(caches, (memo = { result: null, objects: null, hashes: new Map() }));
  return memo;
}

function optionsOf(ctx: ControllerContext, memo: Memo): CompileOptions {
  const { hashes } = memo;
  return {
    pepper: ctx.pepper,
    scope: `namespace ${ctx.clients.namespace}`,
    hashKey: (key) => {
      let h = hashes.get(key);
      if (h === undefined) {
        if (hashes.size >= MAX_HASHES) hashes.clear();
        hashes.set(key, (h = hashKey(key, ctx.pepper)));
      }
      return h;
    },
  };
}

/** The compile of the informer caches (status messages name the namespace). */
export function compiled(ctx: ControllerContext): CompileResult {
  const memo = memoOf(ctx.caches);
  memo.result ??= compile(manifestSetFrom(ctx.caches), optionsOf(ctx, memo));
  return memo.result;
}

/**
 * The compile of everything but the ApiKeys: its snapshot and its verdicts of every other kind are those of
 * compiled() (its keys and ApiKey verdicts are empty).
 */
export function compiledObjects(ctx: ControllerContext): CompileResult {
  const memo = memoOf(ctx.caches);
  memo.objects ??= memo.result ?? compile(manifestSetFrom(ctx.caches, false), optionsOf(ctx, memo));
  return memo.objects;
}

/**
 * One ApiKey's part of the namespace's compile: its verdict and key record depend only on the ApiKey, its Secret, its
 * Account (and that Account's key policy) and the Account's Plan, so compiling just those gives what compiled() gives
 * for it, without reading every object of the namespace once per key (a resync of N keys would be N^2).
 * `key`: the key as the controller just read or wrote it, for when the Secret cache has not seen that write yet (a
 * status must not say "no key" in between); null to read the Secret from the cache only.
 */
export function compiledKey(ctx: ControllerContext, apiKey: string, key: string | null): CompileResult {
  return compile(keyManifestSet(ctx.caches, apiKey), {
    ...optionsOf(ctx, memoOf(ctx.caches)),
    ...(key === null ? {} : { keyFor: (k: { metadata: { name: string } }) => (k.metadata.name === apiKey ? key : null) }),
  });
}

/**
 * Compiles afresh next time: an object changed, or a periodic resync (a watch that went quiet). `keysOnly`: what
 * changed was an ApiKey or a Secret only ApiKeys read, so the compile without them stays.
 */
export function forgetCompiled(caches: Caches, keysOnly = false): void {
  const memo = memoOf(caches);
  memo.result = null;
  if (!keysOnly) memo.objects = null;
}
