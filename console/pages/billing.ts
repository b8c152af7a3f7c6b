// /dashboard/billing: the balance, Add credits (to Stripe Checkout), the Payment link for regional wallets (copyable),
// and the ledger: trial and config credits, payments, refunds, disputes, each with its date and reference.
import { html, type Html } from '../html.ts';
import type { AppliedEntry } from '../../gateway/state/billing-ledger.ts';
import type { ConfigCredit } from '../../billing/backend.ts';
import { MAX_CENTS, MIN_CENTS } from '../../billing/backend.ts';
import type { AccountBilling } from '../../billing/statements/statement.ts';
import { accountSelector } from './keys.ts';
import { field, page, scrollTable, utc } from './layout.ts';
import { usd } from './money.ts';

export interface BillingView {
  user: { name: string; csrf: string };
  accounts: string[];
  account: string;
  configured: boolean;
  balanceNano: number;
  openDisputes: number;
  configCredits: ConfigCredit[];
  entries: AppliedEntry[];
  paymentLink: string | null;
  linkError?: string;
  form?: { amount?: string };
  error?: string;
  notice?: string;
  /** Months with statement links (YYYY-MM, newest first); absent: statements are not available here. */
  statementMonths?: string[];
  /** Account.spec.billing: the invoice header, PO number, terms and SLA the statements carry. */
  accountBilling?: AccountBilling | null;
}

const KIND_LABELS: Record<string, string> = {
  trial: 'Trial credit',
  credit: 'Credit (config)',
  payment: 'Top-up (Stripe)',
  'payment-failed': 'Payment failed (no credit)',
  'payment-unpaid': 'Payment pending (no credit yet)',
  refund: 'Refund',
  'refund-reversed': 'Refund failed (credited back)',
  dispute: 'Dispute',
  'dispute-reinstated': 'Dispute won (reinstated)',
  sla: 'SLA credit',
};

function ledgerRows(v: BillingView): Html[] {
  const rows: Html[] = v.configCredits.map(
    (c) => html`<tr><td>—</td><th scope="row">${KIND_LABELS[c.kind]}</th><td>${c.reference || 'trial'}</td><td class="num">${usd(c.amountNano)}</td></tr>`,
  );
  for (const e of v.entries) {
    rows.push(
      html`<tr><td class="nowrap">${utc(e.at)}</td><th scope="row">${KIND_LABELS[e.kind] ?? e.kind}</th><td><code>${e.reference}</code></td><td class="num">${usd(e.deltaNano)}</td></tr>`,
    );
  }
  return rows;
}

export function billingPage(v: BillingView): Html {
  const payments = v.configured
    ? html`<section aria-labelledby="add-h"><h2 id="add-h">Add credits</h2>
<form method="post" action="/dashboard/billing/checkout" class="stack">
<input type="hidden" name="_csrf" value="${v.user.csrf}"><input type="hidden" name="account" value="${v.account}">
${field({ id: 'amount', label: 'Amount (USD)', value: v.form?.amount ?? '25', error: v.error, hint: `From $${MIN_CENTS / 100} to $${(MAX_CENTS / 100).toLocaleString('en-US')}. You pay on Stripe's page (cards, and the wallets enabled there); the credit appears once Stripe confirms the payment.`, attrs: html` inputmode="decimal" required` })}
<button type="submit">Add credits</button></form></section>
<section aria-labelledby="link-h"><h2 id="link-h">Payment link for regional wallets</h2>
${
  v.paymentLink
    ? html`<p class="hint" id="payment-link-hint">For regional wallets and anyone paying for this account: the amount is chosen on the page, and the payment credits account ${v.account}.</p>
<div class="field"><label for="payment-link">Payment link</label><input id="payment-link" type="text" readonly value="${v.paymentLink}" aria-describedby="payment-link-hint"></div>
<p><button type="button" data-copy="payment-link">Copy</button> <span data-copy-status aria-live="polite"></span></p>`
    : html`<p class="error">The payment link could not be made right now${v.linkError ? html`: ${v.linkError}` : ''}. Reload to try again.</p>`
}</section>`
    : html`<p class="warning" role="status">Payments are not set up: set <code>STRIPE_SECRET_KEY</code> and <code>STRIPE_WEBHOOK_SECRET</code> (and the Stripe webhook to <code>/billing/stripe/webhook</code>) to take payments here.</p>`;
  return page(
    { title: 'Billing', user: v.user, nav: 'billing' },
    html`
${accountSelector('/dashboard/billing', v.accounts, v.account)}
${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}
<dl class="cards"><div class="stat"><dt>Balance</dt><dd>${usd(v.balanceNano)}</dd></div>
${v.openDisputes > 0 ? html`<div class="stat"><dt>Open disputes</dt><dd>${v.openDisputes}</dd></div>` : ''}</dl>
${payments}
${scrollTable(
  'ledger-caption',
  `Ledger of account ${v.account}: credits and payments (usage is on the Usage page)`,
  html`<thead><tr><th scope="col">Date</th><th scope="col">Entry</th><th scope="col">Reference</th><th scope="col" class="num">Amount (USD)</th></tr></thead>
<tbody>${ledgerRows(v)}</tbody>`,
)}
${statements(v)}`,
  );
}

function statements(v: BillingView): Html | string {
  if (!v.statementMonths) return '';
  const b = v.accountBilling;
  const q = `?account=${encodeURIComponent(v.account)}`;
  return html`<section aria-labelledby="st-h"><h2 id="st-h">Monthly statements</h2>
${b ? html`<dl>${b.invoiceHeader ? html`<dt>Invoice header</dt><dd>${b.invoiceHeader.split('\n').map((l, i) => html`${i > 0 ? html`<br>` : ''}${l}`)}</dd>` : ''}${b.poNumber ? html`<dt>PO number</dt><dd>${b.poNumber}</dd>` : ''}${b.taxId ? html`<dt>Tax id</dt><dd>${b.taxId}</dd>` : ''}${b.sla ? html`<dt>SLA</dt><dd>${b.sla.target}% monthly uptime; below it a service credit by tier (below 99.9% 10%, below 99.0% 25%, below 95.0% 100% of the month's spend on the affected models)</dd>` : ''}</dl>` : ''}
<ul>${v.statementMonths.map((m) => html`<li>${m}: <a href="/dashboard/billing/statements/${m}.pdf${q}">PDF<span class="sr-only"> statement ${m}</span></a>, <a href="/dashboard/billing/statements/${m}.csv${q}">CSV<span class="sr-only"> statement ${m}</span></a></li>`)}</ul></section>`;
}
