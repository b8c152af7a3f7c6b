// The Ready condition (kubebuilder convention): status, a CamelCase reason, a sentence, the generation it judged,
// and a transition time that moves only when the status does, so an unchanged verdict writes nothing.
import type { z } from 'zod';
import type { condition } from '../../crds/schema/common.ts';
import type { Verdict as CompileVerdict } from '../../gateway/contract/verdict.ts';

export type Condition = z.infer<typeof condition>;

/** What a Ready condition shows: the compiler's verdict (gateway/contract/verdict.ts), or the controller's own
 *  InvalidSpec and publication states (Publishing, Active). */
export type Verdict = Pick<CompileVerdict, 'ready' | 'reason' | 'message'>;

export function readyCondition(previous: readonly Condition[] | undefined, v: Verdict, generation: number | undefined, now: Date): Condition[] {
  const status = v.ready ? 'True' : 'False';
  const old = previous?.find((c) => c.type === 'Ready');
  // Other conditions (the prober's Available) are kept: a merge patch replaces the list whole.
  return [
    ...(previous ?? []).filter((c) => c.type !== 'Ready'),
    {
      type: 'Ready',
      status,
      reason: v.reason,
      message: v.message,
      observedGeneration: generation,
      lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z'),
    },
  ];
}

export function conditionsOf(status: Record<string, unknown> | undefined): Condition[] | undefined {
  const c = status?.conditions;
  return Array.isArray(c) ? (c as Condition[]) : undefined;
}

/** The Ready condition's verdict as stored, or undefined. */
export function storedVerdict(status: Record<string, unknown> | undefined): Condition | undefined {
  return conditionsOf(status)?.find((c) => c.type === 'Ready');
}
