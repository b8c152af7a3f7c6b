// Stripe entries copied to Postgres ledger_credits (source 'stripe') once, however often the copy runs, and the
// account_ledger view's balance equals the Redis ledger's credited total.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StripeWebhook } from '../../billing/payments/webhook.ts';
import { MemoryBilling } from '../../gateway/state/billing-ledger.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { recordBillingEntries } from '../../gateway/usage/postgres/billing-credits.ts';
import { recordCredits } from '../../gateway/usage/postgres/credits.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { dispute, refund, session, signed } from './events.ts';

const SECRET = 'whsec_pg';
let db: TestPostgres;
beforeAll(async () => {
  db = await startPostgres('billing_ledger');
  await migrate(db.pool);
}, 60_000);
afterAll(async () => {
  await db?.stop();
});

it('copies payments, refunds and disputes to ledger_credits once; the balance view agrees with the Redis-side ledger', async () => {
  const store = new MemoryStore(new MemoryUsageSink());
  const ledger = new MemoryBilling(store);
  let copies = 0;
  const hook = new StripeWebhook({
    ledger,
    webhookSecret: SECRET,
    knownAccount: async () => true,
    now: Date.now,
    log: () => {},
    onAccountTouched: async (a) => void (copies += await recordBillingEntries(db.pool, a, await ledger.entries(a))),
  });
  const post = async (e: object): Promise<void> => {
    const m = signed(e as never, SECRET);
    expect((await hook.handle(Buffer.from(m.body), m.headers['stripe-signature'])).status).toBe(200);
  };
  await recordCredits(db.pool, { accounts: { acme: { name: 'acme', plan: 'p', trialCreditNano: 1_000_000_000, credits: [] } } });
  const pay = session({ account: 'acme', cents: 5000, pi: 'pi_pg' });
  for (let i = 0; i < 3; i++) await post(pay);
  await post(refund('pi_pg', 1000, 're_pg'));
  await post(dispute('pi_pg', 500, 'charge.dispute.created', 'dp_pg'));
  await post(refund('pi_pg', 1000, 're_pg'));
  // A refund that succeeded, then failed: debited, then credited back (kind refund-reversed), each row once.
  await post(refund('pi_pg', 700, 're_pg2'));
  await post(refund('pi_pg', 700, 're_pg2', 'failed', 'refund.failed'));
  await post(refund('pi_pg', 700, 're_pg2', 'failed', 'refund.failed'));
  expect(copies).toBe(5);
  const rows = await db.pool.query(
    "SELECT kind, source, reference, amount_nano::text AS n FROM ledger_credits WHERE source = 'stripe' ORDER BY occurred_at, kind",
  );
  expect(rows.rows.map((r) => [r.kind, r.reference, r.n]).sort()).toEqual(
    [
      ['dispute', 'dp_pg', '-5000000000'],
      ['payment', pay.data.object.id, '50000000000'],
      ['refund', 're_pg', '-10000000000'],
      ['refund', 're_pg2', '-7000000000'],
      ['refund-reversed', 're_pg2', '7000000000'],
    ].sort(),
  );
  const view = await db.pool.query("SELECT credited_nano::text AS c FROM account_ledger WHERE account = 'acme'");
  expect(Number(view.rows[0].c)).toBe((await store.ledger('acme')).creditedNano + 1_000_000_000);
});
