// The hold bounds a call's input by the request body's size in bytes (the prompt is inside the body, and no tokenizer
// yields more tokens than bytes): a balance that covers exactly that is enough, one byte more of body is not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';

// 1 USD a token in, nothing out: the hold of a call in USD is its body's byte count.
const BODY = JSON.stringify({ model: 'priced', messages: [{ role: 'user', content: 'héllo, how much is this?' }], max_tokens: 1 });
const BYTES = Buffer.byteLength(BODY);
const exact = apiKey('exact', 'exact');
const short = apiKey('short', 'short');
// A budget one USD below the call's worst case, on an account with plenty: nothing spent, the hold does not fit.
const capped = apiKey('capped', 'rich', { monthlyBudgetUsd: BYTES - 1 });
let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway([
    plan('p', { tier: 1, anthropicEndpoint: true }),
    account('exact', 'p', { trialCreditUsd: BYTES }),
    account('short', 'p', { trialCreditUsd: BYTES - 1 }),
    account('rich', 'p', { trialCreditUsd: 1000 }),
    ...exact.docs,
    ...short.docs,
    ...capped.docs,
    route('priced', [{ name: 'mock', provider: 'mock' }], { pricing: { inputPerMTokUsd: 1_000_000, outputPerMTokUsd: 0 } }),
  ]);
});

afterAll(async () => {
  await gw?.close();
});

const post = (key: string, body: string): Promise<Response> =>
  fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });

describe('the hold of a call', () => {
  it('is admitted when the balance covers the body size exactly', async () => {
    const r = await post(exact.key, BODY);
    expect(r.status).toBe(200);
  });

  it('is refused, at no cost, when the balance is one byte short', async () => {
    const r = await post(short.key, BODY);
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('insufficient_balance');
    expect(body.error.message).toContain(`may cost up to ${BYTES} USD`);
    expect((await gw.store.ledger('short')).spentNano).toBe(0);
  });

  it("says, in both dialects, that this call's worst case does not fit in what is left, and how to make it fit", async () => {
    // The same bytes in the Anthropic dialect: the same hold.
    const messages = JSON.stringify({ model: 'priced', max_tokens: 1, messages: [{ role: 'user', content: 'héllo, how much is this?' }] });
    expect(Buffer.byteLength(messages)).toBe(BYTES);
    const anthropic = (key: string): Promise<Response> =>
      fetch(`${gw.url}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: messages,
      });
    const worst = `This call may cost up to ${BYTES} USD, more than the ${BYTES - 1} USD left of`;
    const fit = 'a lower max_tokens (or a shorter input) makes it fit';
    for (const [key, code, what] of [
      [short.key, 'insufficient_balance', `the account's balance; ${fit}, or add credit.`],
      [capped.key, 'budget_exceeded', `this key's monthly budget of ${BYTES - 1} USD this month; ${fit}.`],
    ] as const) {
      const openai = await post(key, BODY);
      expect(openai.status).toBe(402);
      expect(await openai.json()).toMatchObject({ error: { code, type: 'insufficient_quota', message: `${worst} ${what}` } });
      const claude = await anthropic(key);
      expect(claude.status).toBe(402);
      expect(await claude.json()).toMatchObject({ type: 'error', error: { type: 'billing_error', message: `${worst} ${what}` } });
    }
  });

  it('counts the body as sent: whitespace and escapes included', async () => {
    const padded = `${BODY}  `;
    const r = await post(exact.key, padded);
    expect(r.status).toBe(402);
    const body = (await r.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`may cost up to ${BYTES + 2} USD`);
  });
});
