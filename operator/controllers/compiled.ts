// One compile of the namespace, shared: the config controller publishes its snapshot and keys, and every other
// controller renders its verdicts into status, so a status says exactly what the gateways were given. Compiled
// again only after forgetCompiled(), which the manager calls on every informer change before it enqueues any work
// (a resync of N objects would otherwise compile N times).
import { compile, type CompileResult } from '../../gateway/contract/compile.ts';
import type { Caches, ControllerContext } from './context.ts';
import { keyManifestSet, manifestSetFrom } from './manifest-set.ts';

interface Memo {
  result: CompileResult | null;
}

const memos = new WeakMap<Caches, Memo>();

function memoOf(caches: Caches): Memo {
  let memo = memos.get(caches);
  if (!memo) memos.set(caches, (memo = { result: null }));
  return memo;
}

/** The compile of the informer caches (status messages name the namespace). */
export function compiled(ctx: ControllerContext): CompileResult {
  const memo = memoOf(ctx.caches);
  memo.result ??= compile(manifestSetFrom(ctx.caches), { pepper: ctx.pepper, scope: `namespace ${ctx.clients.namespace}` });
  return memo.result;
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
    pepper: ctx.pepper,
    scope: `namespace ${ctx.clients.namespace}`,
    ...(key === null ? {} : { keyFor: (k: { metadata: { name: string } }) => (k.metadata.name === apiKey ? key : null) }),
  });
}

/** Compiles afresh next time: an object changed, or a periodic resync (a watch that went quiet). */
export function forgetCompiled(caches: Caches): void {
  memoOf(caches).result = null;
}
