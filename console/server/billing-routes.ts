// /dashboard/billing: for accounts the user may `manage-billing` (the admin: all). Add credits makes a Stripe Checkout
// Session and redirects to it; the Payment link is made once per account and kept in the ledger's store.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseUsdCents, type BillingBackend } from '../../billing/backend.ts';
import { paperOf, statementPdf } from '../../billing/statements/statement-pdf.ts';
import { buildStatement, monthRange, statementCsv } from '../../billing/statements/statement.ts';
import { StripeError } from '../../billing/payments/stripe-client.ts';
import { billingPage, type BillingView } from '../pages/billing.ts';
import { noteAudit } from './audit-hook.ts';
import { accountsWith, Forbidden, formOf, queryOf, sendHtml, userOf, type ConsoleDeps } from './context.ts';

async function pick(deps: ConsoleDeps, req: FastifyRequest, asked: string | undefined): Promise<{ account: string; accounts: string[] }> {
  const accounts = await accountsWith(deps, userOf(req).principal, 'manage-billing');
  const account = asked || accounts[0];
  if (account === undefined)
    throw new Forbidden('You may not manage the billing of any account. Ask your platform team for the manage-billing verb on accounts.');
  if (!accounts.includes(account)) throw new Forbidden(`You may not manage the billing of account ${account}.`);
  return { account, accounts };
}

async function linkFor(b: BillingBackend, account: string): Promise<{ url: string | null; error?: string }> {
  const saved = await b.ledger.paymentLink(account);
  if (saved || !b.stripe) return { url: saved };
  try {
    const link = await b.stripe.createPaymentLink(account);
    await b.ledger.savePaymentLink(account, link.url);
    return { url: link.url };
  } catch (err) {
    return { url: null, error: err instanceof StripeError ? err.message : 'unexpected error' };
  }
}

async function render(
  deps: ConsoleDeps & { billing: BillingBackend },
  req: FastifyRequest,
  reply: FastifyReply,
  status: number,
  extra: Pick<BillingView, 'form' | 'error' | 'notice'> & { account: string | undefined },
): Promise<FastifyReply> {
  const b = deps.billing;
  const { account, accounts } = await pick(deps, req, extra.account);
  const [balanceNano, openDisputes, configCredits, entries, link] = await Promise.all([
    b.balanceNano(account),
    b.ledger.openDisputes(account),
    b.configCredits(account),
    b.ledger.entries(account),
    linkFor(b, account),
  ]);
  return sendHtml(
    reply,
    status,
    billingPage({
      ...extra,
      user: userOf(req),
      accounts,
      account,
      configured: b.stripe !== null,
      balanceNano,
      openDisputes,
      configCredits,
      entries,
      paymentLink: link.url,
      linkError: link.error,
      ...(b.statements ? { statementMonths: recentMonths(deps.now(), 3), accountBilling: (await b.accountBilling?.(account)) ?? null } : {}),
    }),
  );
}

/** The current UTC month and the `n - 1` before it, newest first. */
export function recentMonths(now: number, n: number): string[] {
  const d = new Date(now);
  return Array.from({ length: n }, (_, i) => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - i, 1)).toISOString().slice(0, 7));
}

export function billingRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const b = deps.billing;
  if (!b) return;
  const withB = { ...deps, billing: b };
  app.get('/dashboard/billing', async (req, reply) => {
    const q = queryOf(req);
    const notice =
      q.paid === '1'
        ? 'Thank you: the credit appears here once Stripe confirms the payment.'
        : q.canceled === '1'
          ? 'The payment was canceled; nothing was charged.'
          : undefined;
    return render(withB, req, reply, 200, { account: q.account, notice });
  });

  // A monthly statement, as PDF or CSV: the same manage-billing check as the page, on the server.
  app.get<{ Params: { file: string } }>(
    '/dashboard/billing/statements/:file',
    { config: { audit: { action: 'statement-downloaded' } } },
    async (req, reply) => {
      const m = /^(\d{4}-\d{2})\.(csv|pdf)$/.exec(req.params.file);
      const month = m?.[1] ?? '';
      const q = queryOf(req);
      const { account } = await pick(deps, req, q.account);
      noteAudit(req, { account, object: req.params.file.slice(0, 40) });
      const paper = paperOf(q.paper ?? 'a4');
      if (!m || !monthRange(month) || !b.statements || !paper) return reply.code(404).type('text/plain; charset=utf-8').send('No such statement.');
      await b.copyToPostgres?.(account).catch((err: unknown) => req.log.warn({ err, account }, 'Payments not copied to Postgres before the statement'));
      const s = buildStatement(account, month, (await b.accountBilling?.(account)) ?? null, await b.statements.month(account, month));
      const name = `statement-${account}-${month}.${m[2]}`;
      reply.header('content-disposition', `attachment; filename="${name}"`).header('cache-control', 'no-store');
      return m[2] === 'pdf'
        ? reply.type('application/pdf').send(await statementPdf(s, { paper }))
        : reply.type('text/csv; charset=utf-8').send(statementCsv(s));
    },
  );

  app.post('/dashboard/billing/checkout', { config: { audit: { action: 'checkout-started' } } }, async (req, reply) => {
    const form = formOf(req);
    const { account } = await pick(deps, req, form.account);
    noteAudit(req, { account });
    if (!b.stripe) return render(withB, req, reply, 409, { account, form });
    const amount = parseUsdCents(form.amount);
    if (!('error' in amount)) noteAudit(req, { detail: `USD ${(amount.cents / 100).toFixed(2)}.` });
    if ('error' in amount) return render(withB, req, reply, 422, { account, form, error: amount.error });
    const base = deps.publicBaseUrl ?? `${req.protocol}://${req.host}`;
    const back = `${base}/dashboard/billing?account=${encodeURIComponent(account)}`;
    try {
      const s = await b.stripe.createCheckoutSession({ account, cents: amount.cents, successUrl: `${back}&paid=1`, cancelUrl: `${back}&canceled=1` });
      req.log.info({ account, session: s.id, cents: amount.cents, by: userOf(req).name }, 'Checkout Session created');
      noteAudit(req, { detail: `USD ${(amount.cents / 100).toFixed(2)}, Stripe Checkout Session ${s.id}.` });
      return reply.code(303).header('location', s.url).send();
    } catch (err) {
      if (!(err instanceof StripeError)) throw err;
      req.log.warn({ err, account }, 'Checkout Session not created');
      noteAudit(req, { detail: `USD ${(amount.cents / 100).toFixed(2)}: Stripe did not take the request.` });
      return render(withB, req, reply, 502, { account, form, error: `Stripe did not take the request: ${err.message}` });
    }
  });
}
