// The payments ledger through the webhook, in process, on both ledgers (memory, and billing.lua on a real Redis):
// signatures, exactly once by event and by object, any order (a refund before its payment), refunds followed to their
// final status (only succeeded ones debit, at most the payment; a later failure credits back), refunds counted once
// whether they come as refund.created or charge.refunded, disputes, non-USD set aside (reliability case 15, part 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StripeWebhook, NANO_PER_CENT } from '../../billing/payments/webhook.ts';
import { signatureHeader, verifySignature } from '../../billing/payments/signature.ts';
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
    expect(verifySignature(body, good, SECRET, now)).toMatchObject({ ok: true, event: { id: 'evt_1' } });
    expect(verifySignature(body, `t=${now},v1=${'0'.repeat(64)},v1=${v1}`, SECRET, now).ok).toBe(true);
    expect(verifySignature(body, good, SECRET, now + 300).ok).toBe(true);
    expect(verifySignature(body, good, SECRET, now - 300).ok).toBe(true);
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
    expect(await post(r, chargeRefunded('pi_d1', 3000, [{ id: 're_d1', amount: 3000, status: 'succeeded' }]))).toBe(200);
    expect(await post(r, chargeRefunded('pi_d1', 3000))).toBe(200); // API >= 2022-11-15: refunds not listed
    expect(await r.credited('acct-d')).toBe(USD(7000));
    // A charge's refunded total counts pending refunds too: it moves no money; the refund's own event does, once.
    expect(await post(r, chargeRefunded('pi_d1', 4000))).toBe(200);
    expect(await r.credited('acct-d')).toBe(USD(7000));
    expect(await post(r, refund('pi_d1', 1000, 're_d2'))).toBe(200);
    expect(await post(r, chargeRefunded('pi_d1', 4000, [{ id: 're_d2', amount: 1000, status: 'succeeded' }]))).toBe(200);
    expect(await r.credited('acct-d')).toBe(USD(6000));
    // Refunds up to the whole payment: the balance may go below zero through spend (calls then get 402).
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

// Issue 27 item 4: only succeeded refunds debit; a refund is followed to its furthest status (pending -> succeeded ->
// failed/canceled) whatever order its events come in; a payment's refunds never debit more than the payment.
describe.each(rigs())('refunds by their status (%s)', (_name, make) => {
  it("the issue's sequence on a 20 USD payment: failed -5, canceled -5, oversized -50 ends at 0, not -39", async () => {
    const r = make();
    expect(await post(r, session({ account: 'acct-r1', cents: 2000, pi: 'pi_r1' }))).toBe(200);
    expect(await post(r, refund('pi_r1', 500, 're_r1a', 'failed'))).toBe(200);
    expect(await post(r, refund('pi_r1', 500, 're_r1b', 'canceled'))).toBe(200);
    expect(await r.credited('acct-r1')).toBe(USD(2000));
    expect(await post(r, refund('pi_r1', 5000, 're_r1c', 'succeeded'))).toBe(200);
    expect(await r.credited('acct-r1')).toBe(0);
    // Stripe's later views of the same refunds change nothing: the charge's total, the failures again, the big one again.
    expect(await post(r, chargeRefunded('pi_r1', 0))).toBe(200);
    expect(await post(r, refund('pi_r1', 500, 're_r1a', 'failed', 'refund.failed'))).toBe(200);
    expect(await post(r, refund('pi_r1', 5000, 're_r1c', 'succeeded', 'refund.updated'))).toBe(200);
    expect(await r.credited('acct-r1')).toBe(0);
    expect((await r.ledger.entries('acct-r1')).map((x) => [x.kind, x.reference, x.deltaNano])).toEqual([
      ['payment', expect.stringMatching(/^cs_/), USD(2000)],
      ['refund', 're_r1c', -USD(2000)],
    ]);
  });

  it('debits a pending refund only when it succeeds, once', async () => {
    const r = make();
    expect(await post(r, session({ account: 'acct-r2', cents: 3000, pi: 'pi_r2' }))).toBe(200);
    const pending = refund('pi_r2', 1200, 're_r2', 'pending');
    expect(await post(r, pending)).toBe(200);
    expect(await r.credited('acct-r2')).toBe(USD(3000));
    const done = refund('pi_r2', 1200, 're_r2', 'succeeded', 'refund.updated');
    expect(await post(r, done)).toBe(200);
    expect(await r.credited('acct-r2')).toBe(USD(1800));
    for (const e of [pending, done, refund('pi_r2', 1200, 're_r2', 'succeeded', 'refund.updated'), pending]) expect(await post(r, e)).toBe(200);
    expect(await r.credited('acct-r2')).toBe(USD(1800));
  });

  it('credits back a succeeded refund that later fails, exactly once, and never debits it again', async () => {
    const r = make();
    expect(await post(r, session({ account: 'acct-r3', cents: 4000, pi: 'pi_r3' }))).toBe(200);
    const ok = refund('pi_r3', 1500, 're_r3', 'succeeded');
    expect(await post(r, ok)).toBe(200);
    expect(await r.credited('acct-r3')).toBe(USD(2500));
    const failed = refund('pi_r3', 1500, 're_r3', 'failed', 'refund.failed');
    for (let i = 0; i < 3; i++) expect(await post(r, failed)).toBe(200);
    expect(await post(r, refund('pi_r3', 1500, 're_r3', 'failed', 'refund.updated'))).toBe(200);
    expect(await post(r, chargeRefunded('pi_r3', 0, [{ id: 're_r3', amount: 1500, status: 'failed' }]))).toBe(200);
    expect(await r.credited('acct-r3')).toBe(USD(4000));
    // A late copy of the succeeded view (Stripe does not order events) is older than the failure: nothing.
    expect(await post(r, ok)).toBe(200);
    expect(await post(r, refund('pi_r3', 1500, 're_r3', 'succeeded', 'refund.updated'))).toBe(200);
    expect(await r.credited('acct-r3')).toBe(USD(4000));
    expect((await r.ledger.entries('acct-r3')).map((x) => [x.kind, x.deltaNano])).toEqual([
      ['payment', USD(4000)],
      ['refund', -USD(1500)],
      ['refund-reversed', USD(1500)],
    ]);
  });

  it('caps refunds at the payment across refunds, and gives the room back when one of them fails', async () => {
    const r = make();
    expect(await post(r, session({ account: 'acct-r4', cents: 2000, pi: 'pi_r4' }))).toBe(200);
    expect(await post(r, refund('pi_r4', 1500, 're_r4x'))).toBe(200);
    expect(await post(r, refund('pi_r4', 1000, 're_r4y'))).toBe(200); // only 5 USD of it is left to refund
    expect(await r.credited('acct-r4')).toBe(0);
    expect(await post(r, refund('pi_r4', 1500, 're_r4x', 'failed', 'refund.failed'))).toBe(200);
    expect(await r.credited('acct-r4')).toBe(USD(1000)); // what is left: the 10 USD refund re_r4y
    expect(await post(r, refund('pi_r4', 1000, 're_r4y', 'canceled', 'refund.updated'))).toBe(200);
    expect(await r.credited('acct-r4')).toBe(USD(2000));
  });

  it('reaches the same balance in any order, repeats included, with the payment last or first', async () => {
    const events = (pi: string, account: string): StripeEvent[] => [
      session({ account, cents: 2000, pi }),
      refund(pi, 500, `${pi}_a`, 'pending'),
      refund(pi, 500, `${pi}_a`, 'failed', 'refund.failed'),
      refund(pi, 500, `${pi}_b`, 'pending'),
      refund(pi, 500, `${pi}_b`, 'canceled', 'refund.updated'),
      refund(pi, 700, `${pi}_c`, 'pending'),
      refund(pi, 700, `${pi}_c`, 'succeeded', 'refund.updated'),
      refund(pi, 300, `${pi}_d`, 'succeeded'),
      refund(pi, 300, `${pi}_d`, 'failed', 'refund.failed'),
      refund(pi, 5000, `${pi}_e`, 'succeeded'),
      chargeRefunded(pi, 0),
    ];
    // 20 - 7 (c) - 13 (e, capped at what is left): 0 whatever the order.
    const r = make();
    let seed = 7;
    const rand = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let round = 0; round < 12; round++) {
      const account = `acct-r5-${round}`;
      const list = events(`pi_r5_${round}`, account);
      const order = [...list, ...list.slice(1, 5)].sort(() => rand() - 0.5);
      // The payment first, last, or wherever the shuffle put it.
      const pay = order.splice(order.indexOf(list[0] as StripeEvent), 1);
      if (round % 3 === 0) order.unshift(...pay);
      else if (round % 3 === 1) order.push(...pay);
      else order.splice(Math.floor(rand() * order.length), 0, ...pay);
      if (round % 2 === 0) for (const e of order) expect(await post(r, e)).toBe(200);
      else expect(await Promise.all(order.map((e) => post(r, e)))).toEqual(order.map(() => 200));
      expect([round, await r.credited(account)]).toEqual([round, 0]);
      const refunds = (await r.ledger.entries(account)).filter((x) => x.kind !== 'payment');
      expect(refunds.reduce((a, x) => a + x.deltaNano, 0)).toBe(-USD(2000));
    }
  });

  it('sets aside a refund whose status it does not know, moving no money', async () => {
    const r = make();
    expect(await post(r, session({ account: 'acct-r6', cents: 2000, pi: 'pi_r6' }))).toBe(200);
    const odd = refund('pi_r6', 500, 're_r6', 'succeeded');
    (odd.data.object as Record<string, unknown>).status = 'reversed';
    expect(await post(r, odd)).toBe(200);
    expect(await r.credited('acct-r6')).toBe(USD(2000));
    expect(await r.ledger.setAsideEvents()).toEqual(expect.arrayContaining([{ eventId: odd.id, why: 'refund.created with refund status reversed' }]));
  });
});
