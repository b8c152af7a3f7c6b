// The signed-webhook example of docs/billing.md (Billing), run as written against `npm start` with the README's
// settings (the port moved): applied once, a repeat is a duplicate, and /v1/me of a demo key rises by 25 USD once.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { docExample } from '../helpers/docs.ts';
import { startStripeMock, type StripeMock } from './stripe-mock.ts';

let stripe: StripeMock;
let gw: GatewayProcess;

beforeAll(async () => {
  stripe = await startStripeMock();
  gw = await startGatewayProcess({ STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_test_example', STRIPE_API_BASE: stripe.url });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await stripe?.stop();
});

async function demoBalance(): Promise<number> {
  const m = /^\s+\S+\s+account demo\s+(sk-svc-\S+)$/m.exec(gw.output());
  if (!m?.[1]) throw new Error(`no demo key printed:\n${gw.output()}`);
  const r = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${m[1]}` } });
  return ((await r.json()) as { balance_usd: number }).balance_usd;
}

it('runs the example of docs/billing.md: applied once, then a duplicate; the balance rises by 25 USD once', async () => {
  const script = docExample('docs/billing.md', 'stripe-webhook').replace('http://127.0.0.1:8080', gw.url);
  const before = await demoBalance();
  const run = async (): Promise<string> => (await promisify(execFile)('bash', ['-c', script])).stdout;
  expect(await run()).toBe('{"received":true,"verdict":"applied"}');
  expect(await run()).toBe('{"received":true,"verdict":"duplicate-event"}');
  expect(Math.round(((await demoBalance()) - before) * 100)).toBe(2500);
});
