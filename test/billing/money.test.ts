// Money under concurrency (docs/billing.md: Money): a key's monthly budget and an account's prepaid balance under 50 concurrent calls, over
// 3 processes: dollars over the cap, holds left over, and ledger against the usage events (all must be 0 / equal).
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { chat, countBy, me, useFleet } from '../helpers/fleet.ts';
import { setup } from './fixtures.ts';
import { settled } from '../helpers/settled.ts';

const BUDGET_NANO = 500_000; // 0.0005 USD
const BALANCE_NANO = 400_000; // 0.0004 USD
const s = setup(
  [
    { name: 'rich', spec: { trialCreditUsd: 10 } },
    { name: 'poor', spec: { trialCreditUsd: BALANCE_NANO / NANO_PER_USD } },
  ],
  [
    { name: 'budgeted', account: 'rich', spec: { monthlyBudgetUsd: BUDGET_NANO / NANO_PER_USD } },
    { name: 'unbudgeted', account: 'poor' },
  ],
);
const ctx = useFleet('money', s.docs);

/** Waves of 50 concurrent calls until a whole wave is refused (bounded). */
async function exhaust(key: string): Promise<Record<string, number>> {
  const all: Record<string, number> = {};
  for (let wave = 0; wave < 12; wave++) {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => chat(ctx.fleet.urls[i % 3] as string, key, { max_tokens: 100 })));
    for (const [status, n] of Object.entries(countBy(results, (r) => r.status))) all[status] = (all[status] ?? 0) + n;
    if (results.every((r) => r.status === 402)) return all;
  }
  throw new Error(`never exhausted: ${JSON.stringify(all)}`);
}

async function checkLedger(account: string): Promise<{ spent: number; held: number; open: number }> {
  await settled(ctx.store, account, { tries: 100 });
  const ledger = await ctx.store.ledger(account);
  const events = await ctx.store.usageEvents(account);
  expect(ledger.spentNano).toBe(events.reduce((sum, e) => sum + e.costNano, 0));
  expect(ledger.feeNano).toBe(events.reduce((sum, e) => sum + e.feeNano, 0));
  expect(ledger.feeNano).toBeGreaterThan(0);
  return { spent: ledger.spentNano, held: ledger.heldNano, open: ledger.openHolds };
}

describe('money across 3 gateway processes', () => {
  it("never spends past a key's monthly budget, leaves no hold, and the ledger equals the usage events", async () => {
    const key = s.keys.budgeted as string;
    const statuses = await exhaust(key);
    const { spent, held, open } = await checkLedger('rich');
    console.log(
      `budget ${BUDGET_NANO} nUSD: ${JSON.stringify(statuses)}; spent ${spent}; overshoot ${Math.max(0, spent - BUDGET_NANO)}; held ${held}; open holds ${open}`,
    );
    expect(spent).toBeLessThanOrEqual(BUDGET_NANO);
    expect(held).toBe(0);
    expect(open).toBe(0);
    expect(statuses[200]).toBeGreaterThan(5);
    const view = await me(ctx.fleet.urls[1] as string, key);
    expect(view.body).toMatchObject({
      monthly_budget_usd: BUDGET_NANO / NANO_PER_USD,
      month_spend_usd: spent / NANO_PER_USD,
      balance_usd: (10 * NANO_PER_USD - spent) / NANO_PER_USD,
    });
    const refused = JSON.parse((await chat(ctx.fleet.urls[0] as string, key, { max_tokens: 100 })).body) as { error: { code: string } };
    expect(refused.error.code).toBe('budget_exceeded');
  });

  it("never spends past an account's prepaid balance; the OpenAI SDK sees 402 (not retried)", async () => {
    const key = s.keys.unbudgeted as string;
    const statuses = await exhaust(key);
    const { spent, held, open } = await checkLedger('poor');
    console.log(
      `balance ${BALANCE_NANO} nUSD: ${JSON.stringify(statuses)}; spent ${spent}; overshoot ${Math.max(0, spent - BALANCE_NANO)}; held ${held}; open holds ${open}`,
    );
    expect(spent).toBeLessThanOrEqual(BALANCE_NANO);
    expect(held).toBe(0);
    expect(open).toBe(0);
    const view = await me(ctx.fleet.urls[2] as string, key);
    expect(view.body).toMatchObject({ balance_usd: (BALANCE_NANO - spent) / NANO_PER_USD, monthly_budget_usd: null, month_spend_usd: spent / NANO_PER_USD });
    const client = new OpenAI({ baseURL: `${ctx.fleet.urls[0]}/v1`, apiKey: key, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: 'mock-fast', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_balance');
  });
});
