// A batch's results charged line by line at the batch price, each line's usage bounded by what it could have used
// (its hold's tokens: an upstream's report is not trusted without bound), then what is left of the hold released.
// A line that did not run (cancelled, expired, failed) costs nothing. Idempotent: the store charges a line once
// (PartSettle), so results read again after a restart change nothing.
import type { PartSettle } from '../state/store.ts';
import { lineEvent, type LineOutcome } from './line-events.ts';
import { batchCost } from './plan.ts';
import type { BatchRecord, LineResult } from './types.ts';

export interface Charged {
  outcomes: Array<{ outcome: LineOutcome; result: LineResult }>;
  costNano: number;
}

const MISSING = { code: 'missing_result', message: 'The upstream returned no result for this request.' };

/** What each line is charged: lines without a result are failed lines. */
export function chargeLines(b: BatchRecord, results: readonly LineResult[]): Charged {
  const by = new Map(results.map((r) => [r.customId, r]));
  const outcomes: Charged['outcomes'] = [];
  let costNano = 0;
  for (const line of b.lines) {
    const result = by.get(line.customId) ?? { customId: line.customId, status: 0, body: null, inputTokens: 0, outputTokens: 0, error: MISSING };
    const ran = result.status >= 200 && result.status < 300;
    const input = ran ? Math.min(result.inputTokens, line.inputBound) : 0;
    const output = ran ? Math.min(result.outputTokens, line.outputBound) : 0;
    const cost = ran ? Math.min(batchCost(b.price, input, output), line.holdNano) : 0;
    costNano += cost;
    const status = result.status === 0 ? 499 : result.status;
    const errorCode = ran ? null : (result.error?.code ?? 'upstream_error');
    outcomes.push({ outcome: { customId: line.customId, status, errorCode, inputTokens: input, outputTokens: output, costNano: cost }, result });
  }
  return { outcomes, costNano };
}

/** Charges every line (once each) and releases the rest of the hold. */
export async function settleBatch(parts: PartSettle, b: BatchRecord, charged: Charged, now: number): Promise<void> {
  const holdOf = new Map(b.lines.map((l) => [l.customId, l.holdNano]));
  for (const { outcome } of charged.outcomes) {
    const event = lineEvent(b, outcome, now);
    await parts.settleLine(b.hold, { lineId: event.eventId, lineHoldNano: holdOf.get(outcome.customId) ?? 0, costNano: outcome.costNano, event });
  }
  await parts.release(b.hold, now);
}
