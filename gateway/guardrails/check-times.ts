// What tracing shows of a call's guardrail checks: per check and stage, how many matches it found and how long its
// detector ran (summed over every text it read: a whole body, or each piece of a stream). Kept only while the call
// is traced; the spans themselves are made by the tracer (gateway/tracing/guard-spans.ts). Never the text.
import type { GuardFact } from './apply.ts';
import type { ActiveCheck, CallGuards } from './policy.ts';

/** One check's part in one stage of a call: a child span of the call's span. */
export interface CheckSpan {
  guardrail: string;
  check: string;
  detector: string;
  stage: GuardFact['stage'];
  action: ActiveCheck['action'];
  matches: number;
  /** Whether this check blocked the call. */
  blocked: boolean;
  /** When the stage's first scan began (epoch ms) and how long this check's detector ran in all (ms). */
  startedAt: number;
  durationMs: number;
}

/** Where the spans go: the call's trace (pipeline/context.ts CallTrace.guardCheck). */
export type CheckSink = (s: CheckSpan) => void;

interface StageTimes {
  startedAt: number;
  /** Per check of the stage, by its index: its detector's time (ms), added by scanText. */
  ms: number[];
}

export class CheckTimes {
  private readonly guards: CallGuards;
  private readonly sink: CheckSink;
  private readonly stages = new Map<GuardFact['stage'], StageTimes>();

  constructor(guards: CallGuards, sink: CheckSink) {
    this.guards = guards;
    this.sink = sink;
  }

  /** The times a scan of this stage adds to (scan.ts). */
  of(stage: GuardFact['stage']): number[] {
    let s = this.stages.get(stage);
    if (!s) {
      s = { startedAt: Date.now(), ms: this.guards[stage].map(() => 0) };
      this.stages.set(stage, s);
    }
    return s.ms;
  }

  /** One span per check of a stage that ran, with the matches the call's facts count for it; once per stage. */
  emit(stage: GuardFact['stage'], facts: readonly GuardFact[], blocked: GuardFact | null): void {
    const s = this.stages.get(stage);
    if (!s) return;
    this.stages.delete(stage);
    this.guards[stage].forEach((c, i) => {
      const mine = facts.filter((f) => f.stage === stage && f.guardrail === c.guardrail && f.check === c.check);
      this.sink({
        guardrail: c.guardrail,
        check: c.check,
        detector: c.detector,
        stage,
        action: c.action,
        matches: mine.reduce((n, f) => n + f.count, 0),
        blocked: blocked !== null && blocked.stage === stage && blocked.guardrail === c.guardrail && blocked.check === c.check,
        startedAt: s.startedAt,
        durationMs: s.ms[i] ?? 0,
      });
    });
  }
}
