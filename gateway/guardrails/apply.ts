// Runs a stage's checks over a body's text places: the first block ends it (the call is refused), masks replace
// their matches in place, logs only count. What it returns says what was found and done, never the text.
import { GatewayError } from '../errors/catalog.ts';
import type { Masker } from './masker.ts';
import type { ActiveCheck } from './policy.ts';
import { scanText } from './scan.ts';
import type { TextPlace } from './text-places.ts';

/** Same shape as the usage event's GuardrailFact. */
export interface GuardFact {
  guardrail: string;
  check: string;
  action: 'block' | 'mask' | 'log';
  stage: 'request' | 'response';
  /** What was found (`email`, `aws-access-key`, a regex's name) and how many times. */
  kind: string;
  count: number;
}

export interface StageResult {
  facts: GuardFact[];
  /** The check that blocked, if one did. */
  blocked: GuardFact | null;
}

/** `times`: each check's detector time is added there when the call is traced (check-times.ts). */
export function applyChecks(
  checks: readonly ActiveCheck[],
  places: readonly TextPlace[],
  stage: GuardFact['stage'],
  masker: Masker,
  times?: number[],
): StageResult {
  const counts = new Map<string, GuardFact>();
  const note = (c: ActiveCheck, kind: string): GuardFact => {
    const id = `${c.guardrail}\u0000${c.check}\u0000${kind}`;
    let f = counts.get(id);
    if (!f) {
      f = { guardrail: c.guardrail, check: c.check, action: c.action, stage, kind, count: 0 };
      counts.set(id, f);
    }
    f.count += 1;
    return f;
  };
  const detectors = checks.map((c) => c.detect);
  for (const place of places) {
    const text = place.get();
    const found = scanText(text, detectors, times);
    if (found.length === 0) continue;
    let out = '';
    let at = 0;
    for (const h of found) {
      const c = checks[h.detector]!;
      const fact = note(c, h.kind);
      if (c.action === 'block') return { facts: [...counts.values()], blocked: fact };
      if (c.action === 'mask') {
        out += text.slice(at, h.start) + masker.placeholder(h.kind, text.slice(h.start, h.end), c.restore);
        at = h.end;
      }
    }
    if (at > 0) place.set(out + text.slice(at));
  }
  return { facts: [...counts.values()], blocked: null };
}

/** The caller's error for a block: names the guardrail and check, never what matched. */
export function blockedError(f: GuardFact): GatewayError {
  const where = f.stage === 'request' ? 'The request' : 'The answer';
  return new GatewayError('content_blocked', `${where} was blocked by guardrail ${f.guardrail} (check ${f.check}: ${f.kind} found).`);
}
