// One compile of the namespace, shared: the config controller publishes its snapshot and keys, and every other
// controller renders its verdicts into status, so a status says exactly what the gateways were given. Compiled
// again only after forgetCompiled(), which the manager calls on every informer change before it enqueues any work
// (a resync of N objects would otherwise compile N times).
import { compile, type CompileResult } from '../../gateway/contract/compile.ts';
import type { Caches, ControllerContext } from './context.ts';
import { manifestSetFrom } from './manifest-set.ts';

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
 * The compile with one ApiKey's key as the controller just read or wrote it: the Secret cache may not have seen
 * that write yet, and a status must not say "no key" in between.
 */
export function compiledWithKey(ctx: ControllerContext, apiKey: string, key: string): CompileResult {
  return compile(manifestSetFrom(ctx.caches), {
    pepper: ctx.pepper,
    scope: `namespace ${ctx.clients.namespace}`,
    keyFor: (k) => (k.metadata.name === apiKey ? key : null),
  });
}

/** Compiles afresh next time: an object changed, or a periodic resync (a watch that went quiet). */
export function forgetCompiled(caches: Caches): void {
  memoOf(caches).result = null;
}
