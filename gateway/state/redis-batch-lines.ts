// The parts of a batch's hold (the Batch API: one hold for the whole batch, settled line by line): each line's
// charge and usage event by lua/settle-line.lua (idempotent per line id), and the hold's release at the end.
import { checkAmount, settledAt, type Hold, type LineSettlement, type PartSettle } from './store.ts';
import type { ScriptContext } from './redis-script-context.ts';
import { SCRIPTS } from './scripts.ts';

export function batchLineParts(c: ScriptContext): PartSettle {
  return {
    settleLine: (hold, s) => settleLine(c, hold, s),
    release: (hold, now) => releaseHold(c, hold, now),
  };
}

async function settleLine(c: ScriptContext, hold: Hold, s: LineSettlement): Promise<void> {
  checkAmount('costNano', s.costNano);
  checkAmount('lineHoldNano', s.lineHoldNano);
  checkAmount('feeNano', s.event.feeNano);
  const a = c.k.account(hold.account);
  c.batch.join();
  await c.guard('settle', () =>
    SCRIPTS.settleLine.run(
      c.redis,
      {
        acct: a.acct,
        holds: a.holds,
        holdrec: a.holdrec,
        held: a.held,
        spend: a.spend,
        usage: a.usage,
        lines: c.k.batchLines(hold.account, hold.id),
        settled: a.settled,
      },
      {
        id: hold.id,
        lineId: s.lineId,
        keyName: hold.key,
        month: hold.month,
        lineHoldNano: s.lineHoldNano,
        costNano: s.costNano,
        feeNano: s.event.feeNano,
        now: settledAt({ costNano: s.costNano, tokens: 0, event: s.event }),
        eventJson: JSON.stringify(s.event),
        streamMaxLen: c.streamMaxLen,
      },
    ),
  );
}

async function releaseHold(c: ScriptContext, hold: Hold, now: number): Promise<void> {
  const a = c.k.account(hold.account);
  await c.guard('settle', () =>
    SCRIPTS.releaseHold.run(
      c.redis,
      { acct: a.acct, holds: a.holds, holdrec: a.holdrec, held: a.held, lines: c.k.batchLines(hold.account, hold.id) },
      { id: hold.id, now },
    ),
  );
}
