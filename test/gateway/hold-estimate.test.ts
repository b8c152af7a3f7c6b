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
let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway([
    plan('p', { tier: 1 }),
    account('exact', 'p', { trialCreditUsd: BYTES }),
    account('short', 'p', { trialCreditUsd: BYTES - 1 }),
    ...exact.docs,
    ...short.docs,
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

  it('counts the body as sent: whitespace and escapes included', async () => {
    const padded = `${BODY}  `;
    const r = await post(exact.key, padded);
    expect(r.status).toBe(402);
    const body = (await r.json()) as { error: { message: string } };
    expect(body.error.message).toContain(`may cost up to ${BYTES + 2} USD`);
  });
});
