// Reliability case 15: Stripe webhooks to 3 standalone processes (each serves the console and the webhook) on one real
// Redis, Stripe's API from stripe-mock. The same event many times to every replica at once, a refund racing its
// payment on two replicas, forged and stale signatures: money moves exactly once, and /v1/me of a key of the account
// shows the balance rise exactly once, from every replica.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, me, type Fleet } from '../helpers/fleet.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { setup } from '../billing/fixtures.ts';
import { refund, session, signed, type StripeEvent } from './events.ts';
import { startStripeMock, type StripeMock } from './stripe-mock.ts';

const SECRET = 'whsec_replicas_test_secret';
const s = setup([{ name: 'acme', spec: { trialCreditUsd: 1 } }], [{ name: 'k', account: 'acme' }]);
let redis: TestRedis;
let stripe: StripeMock;
let fleet: Fleet;

beforeAll(async () => {
  [redis, stripe] = await Promise.all([startRedis('billing-replicas'), startStripeMock()]);
  fleet = await startFleet(3, redis, s.docs, { STRIPE_SECRET_KEY: 'sk_test_replicas', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_API_BASE: stripe.url });
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  await stripe?.stop();
  await redis?.stop();
});

async function deliver(url: string, e: StripeEvent | string, secret = SECRET, at?: number): Promise<number> {
  const m = signed(e, secret, at);
  const r = await fetch(`${url}/billing/stripe/webhook`, { method: 'POST', headers: m.headers, body: m.body });
  await r.arrayBuffer();
  return r.status;
}

async function balances(): Promise<unknown[]> {
  return Promise.all(fleet.urls.map(async (u) => (await me(u, s.keys.k as string)).body.balance_usd));
}

describe('Stripe webhooks across replicas (reliability case 15)', () => {
  it('applies a paid session once when it reaches every replica 5 times at once', async () => {
    expect(await balances()).toEqual([1, 1, 1]);
    const e = session({ account: 'acme', cents: 2500 });
    const statuses = await Promise.all(fleet.urls.flatMap((u) => Array.from({ length: 5 }, () => deliver(u, e))));
    expect(statuses).toEqual(Array(15).fill(200));
    expect(await balances()).toEqual([26, 26, 26]);
    // Stripe retries a day later: still once.
    expect(await deliver(fleet.urls[2] as string, e)).toBe(200);
    expect(await balances()).toEqual([26, 26, 26]);
  });

  it('nets a refund racing its payment on other replicas, in either order', async () => {
    for (let round = 0; round < 4; round++) {
      const pi = `pi_race_${round}_${Date.now()}`;
      const pay = session({ account: 'acme', cents: 1000, pi });
      const back = refund(pi, 400);
      const [a, b, c] = fleet.urls as [string, string, string];
      const order =
        round % 2 === 0
          ? [deliver(a, back), deliver(b, pay), deliver(c, back), deliver(c, pay)]
          : [deliver(b, pay), deliver(a, back), deliver(c, pay), deliver(a, back)];
      expect(await Promise.all(order)).toEqual([200, 200, 200, 200]);
    }
    const want = 26 + 4 * 6;
    expect(await balances()).toEqual([want, want, want]);
  });

  it('follows refunds to their final status across replicas: each debit and credit-back once, at most the payment', async () => {
    const before = (await balances())[0] as number;
    const pi = `pi_status_${Date.now()}`;
    // The 20 USD sequence (failed -5, canceled -5, oversized -50) and a 5 USD refund that succeeds, then fails.
    const events = [
      session({ account: 'acme', cents: 2000, pi }),
      refund(pi, 500, `re_${pi}_f`, 'failed'),
      refund(pi, 500, `re_${pi}_c`, 'pending'),
      refund(pi, 500, `re_${pi}_c`, 'canceled', 'refund.updated'),
      refund(pi, 500, `re_${pi}_s`, 'succeeded'),
      refund(pi, 500, `re_${pi}_s`, 'failed', 'refund.failed'),
    ];
    const big = [refund(pi, 5000, `re_${pi}_big`, 'pending'), refund(pi, 5000, `re_${pi}_big`, 'succeeded', 'refund.updated')];
    // Every event to every replica at once, twice over, each replica in another order (the payment not always first).
    const everywhere = (list: StripeEvent[]): Array<Promise<number>> =>
      fleet.urls.flatMap((u, i) => [...list.slice(i), ...list.slice(0, i), ...[...list].reverse()].map((e) => deliver(u, e)));
    expect(new Set(await Promise.all(everywhere(events)))).toEqual(new Set([200]));
    expect(await balances()).toEqual([before + 20, before + 20, before + 20]);
    expect(new Set(await Promise.all(everywhere(big)))).toEqual(new Set([200]));
    expect(await balances()).toEqual([before, before, before]);
  });

  it('refuses forged, tampered and stale deliveries with 400 on every replica, and nothing changes', async () => {
    const before = await balances();
    const e = session({ account: 'acme', cents: 100_000 });
    const ok = signed(e, SECRET);
    for (const u of fleet.urls) {
      expect(await deliver(u, e, 'whsec_forged')).toBe(400);
      expect(await deliver(u, e, SECRET, Math.floor(Date.now() / 1000) - 301)).toBe(400);
      const tampered = await fetch(`${u}/billing/stripe/webhook`, { method: 'POST', headers: ok.headers, body: ok.body.replace('"acme"', '"acme" ') });
      expect(tampered.status).toBe(400);
      const unsigned = await fetch(`${u}/billing/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ok.body });
      expect(unsigned.status).toBe(400);
    }
    expect(await balances()).toEqual(before);
  });

  it('sets a non-USD session aside, logged, with no credit', async () => {
    const before = await balances();
    const e = session({ account: 'acme', cents: 9900, currency: 'eur' });
    expect(await deliver(fleet.urls[0] as string, e)).toBe(200);
    expect(await balances()).toEqual(before);
    expect(fleet.procs[0]?.output()).toContain('Stripe event set aside, not applied');
  });
});
