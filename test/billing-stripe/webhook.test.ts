// The payments ledger through the webhook, in process, on both ledgers (memory, and billing.lua on a real Redis):
// signatures, exactly once by event and by object, any order (a refund before its payment), refunds counted once
// whether they come as refund.created or charge.refunded, disputes, non-USD set aside (reliability case 15, part 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StripeWebhook, NANO_PER_CENT } from '../../console/billing/webhook.ts';
import { signatureHeader, verifySignature } from '../../console/billing/signature.ts';
import { MemoryBilling, RedisBilling, type BillingLedger } from '../../gateway/state/billing-ledger.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { chargeRefunded, dispute, refund, sameSession, session, signed, type StripeEvent } from './events.ts';

const SECRET = 'whsec_test_secret_for_the_webhook_suite';
let redis: TestRedis;
let redisStore: RedisStore;

beforeAll(async () => {
  redis = await startRedis('billing-webhook');
  redisStore = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
});

afterAll(async () => {
  await redisStore?.close();
  await redis?.stop();
});

interface Rig {
  hook: StripeWebhook;
  ledger: BillingLedger;
  credited(account: string): Promise<number>;
}

let seq = 0;
function rigs(): Array<[string, () => Rig]> {
  const mk = (ledger: BillingLedger, credited: (a: string) => Promise<number>): Rig => ({
    ledger,
    credited,
    hook: new StripeWebhook({ ledger, webhookSecret: SECRET, knownAccount: async (a) => a.startsWith('acct'), now: Date.now, log: () => {} }),
  });
  return [
    [
      'memory',
      () => {
        const store = new MemoryStore(new MemoryUsageSink());
        return mk(new MemoryBilling(store), async (a) => (await store.ledger(a)).creditedNano);
      },
    ],
    [
      'redis',
      () => {
        const prefix = `${redis.prefix}-${seq++}`;
        return mk(new RedisBilling(redisStore.redis, prefix), async (a) => Number((await redisStore.redis.hget(`${prefix}:{a:${a}}:acct`, 'credited')) ?? 0));
      },
    ],
  ];
}

async function post(r: Rig, e: StripeEvent | string, secret = SECRET, at?: number): Promise<number> {
  const s = signed(e, secret, at);
  return (await r.hook.handle(Buffer.from(s.body), s.headers['stripe-signature'])).status;
}

const USD = (cents: number): number => cents * NANO_PER_CENT;

describe('Stripe signatures', () => {
  it('accepts any matching v1 among several, within 300 s; refuses tampered, wrong secret, stale, future and malformed', () => {
    const body = '{"id":"evt_1"}';
    const now = 1_800_000_000;
    const good = signatureHeader(body, SECRET, now);
    const v1 = good.split('v1=')[1];
    expect(verifySignature(body, good, SECRET, now)).toEqual({ ok: true });
    expect(verifySignature(body, `t=${now},v1=${'0'.repeat(64)},v1=${v1}`, SECRET, now)).toEqual({ ok: true });
    expect(verifySignature(body, good, SECRET, now + 300)).toEqual({ ok: true });
    expect(verifySignature(body, good, SECRET, now + 301).ok).toBe(false);
    expect(verifySignature(body, good, SECRET, now - 301).ok).toBe(false);
    expect(verifySignature('{"id":"evt_2"}', good, SECRET, now).ok).toBe(false);
    expect(verifySignature(body, good, 'whsec_other', now).ok).toBe(false);
    for (const h of [undefined, '', 't=1', `v1=${v1}`, `t=${now},v0=${v1}`, `t=x,v1=${v1}`]) expect(verifySignature(body, h, SECRET, now).ok).toBe(false);
  });
});

describe.each(rigs())('the payments ledger (%s)', (_name, make) => {
  it('credits a paid session once, however often and under whichever event it comes', async () => {
    const r = make();
    const e = session({ account: 'acct-a', cents: 2500 });
    for (let i = 0; i < 5; i++) expect(await post(r, e)).toBe(200);
    expect(await post(r, sameSession(e, 'checkout.session.async_payment_succeeded'))).toBe(200);
    expect(await post(r, sameSession(e, 'checkout.session.completed'))).toBe(200);
    await Promise.all(Array.from({ length: 10 }, () => post(r, e)));
    expect(await r.credited('acct-a')).toBe(USD(2500));
    expect((await r.ledger.entries('acct-a')).map((x) => [x.kind, x.deltaNano])).toEqual([['payment', USD(2500)]]);
  });

  it('records unpaid and failed sessions without money, and credits once when the async payment succeeds', async () => {
    const r = make();
    const e = session({ account: 'acct-b', cents: 1000, paid: false });
    expect(await post(r, e)).toBe(200);
    expect(await post(r, sameSession(e, 'checkout.session.async_payment_succeeded'))).toBe(200);
    const f = session({ account: 'acct-b', cents: 700, paid: false });
    expect(await post(r, sameSession(f, 'checkout.session.async_payment_failed', false))).toBe(200);
    expect(await r.credited('acct-b')).toBe(USD(1000));
    expect((await r.ledger.entries('acct-b')).map((x) => x.kind)).toEqual(['payment-unpaid', 'payment', 'payment-failed']);
  });

  it('refuses forged, tampered and stale events with 400 and changes nothing', async () => {
    const r = make();
    const e = session({ account: 'acct-c', cents: 5000 });
    const s = signed(e, SECRET);
    expect((await r.hook.handle(Buffer.from(s.body.replace('5000', '500000')), s.headers['stripe-signature'])).status).toBe(400);
    expect(await post(r, e, 'whsec_wrong')).toBe(400);
    expect(await post(r, e, SECRET, Math.floor(Date.now() / 1000) - 301)).toBe(400);
    expect((await r.hook.handle(Buffer.from(s.body), undefined)).status).toBe(400);
    expect(await r.credited('acct-c')).toBe(0);
    expect(await r.ledger.entries('acct-c')).toEqual([]);
  });

  it('nets a refund that arrives before its payment, and counts a refund once across refund.created and charge.refunded', async () => {
    const r = make();
    const pay = session({ account: 'acct-d', cents: 10_000, pi: 'pi_d1' });
    const early = refund('pi_d1', 3000, 're_d1');
    expect(await post(r, early)).toBe(200); // parked: the payment is not known yet
    expect(await r.credited('acct-d')).toBe(0);
    expect(await post(r, pay)).toBe(200);
    expect(await r.credited('acct-d')).toBe(USD(7000));
    expect(await post(r, early)).toBe(200);
    expect(await post(r, chargeRefunded('pi_d1', 3000, [{ id: 're_d1', amount: 3000 }]))).toBe(200);
    expect(await post(r, chargeRefunded('pi_d1', 3000))).toBe(200); // API >= 2022-11-15: refunds not listed
    expect(await r.credited('acct-d')).toBe(USD(7000));
    // A second refund seen first as the charge's total, then as its own event: debited once.
    expect(await post(r, chargeRefunded('pi_d1', 4000))).toBe(200);
    expect(await r.credited('acct-d')).toBe(USD(6000));
    expect(await post(r, refund('pi_d1', 1000, 're_d2'))).toBe(200);
    expect(await r.credited('acct-d')).toBe(USD(6000));
    // Refunds past the payment: the balance may go below zero (calls then get 402).
    expect(await post(r, refund('pi_d1', 6000, 're_d3'))).toBe(200);
    expect(await r.credited('acct-d')).toBe(0);
  });

  it('debits a dispute and credits it back when the funds are reinstated, each once', async () => {
    const r = make();
    expect(await post(r, session({ account: 'acct-e', cents: 4000, pi: 'pi_e1' }))).toBe(200);
    const d = dispute('pi_e1', 4000, 'charge.dispute.created', 'dp_e1');
    for (let i = 0; i < 3; i++) expect(await post(r, d)).toBe(200);
    expect(await r.credited('acct-e')).toBe(0);
    expect(await r.ledger.openDisputes('acct-e')).toBe(1);
    const won = dispute('pi_e1', 4000, 'charge.dispute.funds_reinstated', 'dp_e1');
    for (let i = 0; i < 3; i++) expect(await post(r, won)).toBe(200);
    expect(await r.credited('acct-e')).toBe(USD(4000));
    expect(await r.ledger.openDisputes('acct-e')).toBe(0);
    expect((await r.ledger.entries('acct-e')).map((x) => [x.kind, x.reference, x.deltaNano])).toEqual([
      ['payment', expect.stringMatching(/^cs_/), USD(4000)],
      ['dispute', 'dp_e1', -USD(4000)],
      ['dispute-reinstated', 'dp_e1', USD(4000)],
    ]);
  });

  it('sets aside a non-USD session and one for an unknown account, crediting nothing', async () => {
    const r = make();
    const eur = session({ account: 'acct-f', cents: 2000, currency: 'eur' });
    expect(await post(r, eur)).toBe(200);
    const stranger = session({ account: 'nobody', cents: 2000 });
    expect(await post(r, stranger)).toBe(200);
    expect(await r.credited('acct-f')).toBe(0);
    const aside = await r.ledger.setAsideEvents();
    expect(aside).toEqual(
      expect.arrayContaining([
        { eventId: eur.id, why: 'currency eur is not usd' },
        { eventId: stranger.id, why: expect.stringContaining('no known account') },
      ]),
    );
  });

  it('ignores events it does not handle and refuses bodies that are not events', async () => {
    const r = make();
    expect(await post(r, { id: 'evt_x', type: 'customer.created', created: 1, data: { object: { id: 'cus_1' } } })).toBe(200);
    expect(await post(r, 'not json')).toBe(400);
    expect(await post(r, '{"id":"evt_y"}')).toBe(400);
  });
});
