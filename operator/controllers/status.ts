// Writes a controller's verdict to the object's status: only when something changed (so a reconcile of an
// unchanged object writes nothing), through /status with a merge patch; a new failure reason is also an Event, but
// not a state that only says the work is under way (a new key's Publishing lasts a moment, and an Event for each key
// would be one more API write per key and a Warning for nothing wrong).
import { canonicalJson } from '../../gateway/contract/canonical-json.ts';
import type { CrKind, CustomObject } from '../kube/clients.ts';
import { patchStatus } from '../kube/patch.ts';
import { conditionsOf, readyCondition, storedVerdict, type Verdict } from './conditions.ts';
import { objectKey, type ControllerContext } from './context.ts';

/** Fields of `desired` that differ from `current`; null means "absent". */
export function statusDiff(current: Record<string, unknown> | undefined, desired: Record<string, unknown>): string[] {
  const cur = current ?? {};
  return Object.keys(desired).filter((k) => {
    const want = desired[k];
    if (want === null || want === undefined) return cur[k] !== undefined && cur[k] !== null;
    return canonicalJson(cur[k]) !== canonicalJson(want);
  });
}

/** Ready=False reasons that say the work is under way, not that anything is wrong: no Warning Event. */
const IN_PROGRESS: ReadonlySet<string> = new Set(['Publishing']);

export async function writeStatus(
  ctx: ControllerContext,
  kind: CrKind,
  obj: CustomObject,
  verdict: Verdict,
  fields: Record<string, unknown> = {},
): Promise<void> {
  const name = obj.metadata?.name ?? '';
  const generation = obj.metadata?.generation;
  const desired: Record<string, unknown> = {
    ...fields,
    observedGeneration: generation ?? null,
    conditions: readyCondition(conditionsOf(obj.status), verdict, generation, ctx.now()),
  };
  const changed = statusDiff(obj.status, desired);
  if (changed.length === 0) return;
  const before = storedVerdict(obj.status);
  await patchStatus(ctx.clients, kind, name, desired);
  ctx.log.info('Updated status', { [kind]: objectKey(ctx, name), ready: verdict.ready, reason: verdict.reason, fields: changed });
  if (!verdict.ready && !IN_PROGRESS.has(verdict.reason) && before?.reason !== verdict.reason) {
    await ctx.events.record(
      { ...obj, apiVersion: obj.apiVersion, kind },
      { type: 'Warning', reason: verdict.reason, action: 'Reconcile', message: verdict.message },
    );
  }
}
