// /dashboard/usage: From / To / Group by (in the URL), cards, the spend-per-day chart and the table; the CSV link
// exports the same table. Every figure comes from one report (console/usage/report.ts).
import { html, type Html } from '../html.ts';
import { spendChart } from '../usage/chart.ts';
import { COLUMNS, figureCells, MONEY_COLUMNS } from '../usage/csv.ts';
import { presets, query, type UsageParams } from '../usage/params.ts';
import type { GuardrailRow } from '../usage/guardrails.ts';
import { GROUP_LABELS, type Figures, type GroupBy, type UsageReport } from '../usage/report.ts';
import { accountSelector } from './keys.ts';
import { page, scrollTable } from './layout.ts';
import { usd } from './money.ts';

export interface UsageView {
  user: { name: string; csrf: string };
  accounts: string[];
  params: UsageParams;
  report: UsageReport;
  /** Guardrail blocks, masks and logs by key and guardrail (console/usage/guardrails.ts). */
  guardrails: GuardrailRow[];
  now: number;
}

function card(label: string, value: Html | string): Html {
  return html`<div class="stat"><dt>${label}</dt><dd>${value}</dd></div>`;
}

/** A row's figures as cells, in the table's column order (console/usage/csv.ts: the CSV writes the same list). */
function figureTds(f: Figures): Html[] {
  return figureCells(f).map((c) => (c.money ? html`<td class="num">${usd(c.value)}</td>` : html`<td>${c.value}</td>`));
}

function controls(v: UsageView): Html {
  const p = v.params;
  const opts = (Object.keys(GROUP_LABELS) as GroupBy[]).map(
    (g) => html`<option value="${g}"${g === p.groupBy ? html` selected` : ''}>${GROUP_LABELS[g]}</option>`,
  );
  const accountField =
    v.accounts.length > 1
      ? html`<div class="field"><label for="account">Account</label><select id="account" name="account">${v.accounts.map((a) => html`<option value="${a}"${a === p.account ? html` selected` : ''}>${a}</option>`)}</select></div>`
      : html`<input type="hidden" name="account" value="${p.account}">`;
  return html`<form method="get" action="/dashboard/usage" class="controls">
${accountField}
<div class="field"><label for="from">From</label><input id="from" name="from" type="date" value="${p.from}" aria-describedby="dates-hint"></div>
<div class="field"><label for="to">To</label><input id="to" name="to" type="date" value="${p.to}" aria-describedby="dates-hint"></div>
<div class="field"><label for="group">Group by</label><select id="group" name="group">${opts}</select></div>
<button type="submit">Show</button>
<p id="dates-hint" class="hint">Dates are UTC days, both included.</p>
</form>
<nav aria-label="Date presets" class="presets">${presets(v.now).map((x) => html`<a href="/dashboard/usage?${query({ ...p, from: x.from, to: x.to })}">${x.label}</a> `)}</nav>`;
}

export function usagePage(v: UsageView): Html {
  const { report: r, params: p } = v;
  const t = r.totals;
  const label = GROUP_LABELS[p.groupBy];
  return page(
    { title: 'Usage', user: v.user, nav: 'usage' },
    html`
${v.accounts.length > 1 ? '' : accountSelector('/dashboard/usage', v.accounts, p.account)}
${controls(v)}
<h2>Account ${p.account}, ${p.from} to ${p.to} (UTC)</h2>
<dl class="cards">${card('Spend', usd(t.costNano))}${card('Requests', String(t.requests))}${card('Tokens in', String(t.inputTokens))}
${card('Tokens out', String(t.outputTokens))}${card('Search units (rerank)', String(t.searchUnits))}${card('Errors', String(t.errors))}${card('Fallbacks', String(t.fallbacks))}
${card('Cache hits', String(t.cacheHits))}${card('Saved by cache', usd(t.cacheSavedNano))}
${card('Audio seconds (transcriptions)', String(t.audioSeconds))}${card('Characters (speech)', String(t.characters))}${card('Images', String(t.images))}
${card('Batch lines', String(t.batchRequests))}${card('Batch spend', usd(t.batchCostNano))}</dl>
${spendChart(r.days)}
${scrollTable(
  'usage-caption',
  `Usage by ${label.toLowerCase()}`,
  html`<thead><tr><th scope="col">${label}</th>${COLUMNS.map((c) => html`<th scope="col"${MONEY_COLUMNS.has(c) ? html` class="num"` : ''}>${c}</th>`)}</tr></thead>
<tbody>${r.rows.length === 0 ? html`<tr><td colspan="${COLUMNS.length + 1}">No calls in this period.</td></tr>` : r.rows.map((x) => html`<tr><th scope="row">${x.group}</th>${figureTds(x)}</tr>`)}</tbody>
<tfoot><tr><th scope="row">Total</th>${figureTds(t)}</tr></tfoot>`,
)}
<p><a href="/dashboard/usage.csv?${query(p)}" download>Download CSV</a></p>
${guardrailTable(v.guardrails)}`,
  );
}

/**
 * Blocks and masks by key and guardrail: what the account's Guardrails did in the period (never what matched). A
 * period without a match shows one line and no table (the usage table stays the page's last).
 */
function guardrailTable(rows: GuardrailRow[]): Html {
  if (rows.length === 0)
    return html`<h2>Guardrails</h2>
<p>No guardrail matched a call in this period.</p>`;
  const sum = (f: (r: GuardrailRow) => number): number => rows.reduce((n, r) => n + f(r), 0);
  return html`<h2>Guardrails</h2>
<dl class="cards">${card('Calls blocked', String(sum((r) => r.blocked)))}${card('Values masked', String(sum((r) => r.masked)))}${card('Matches logged', String(sum((r) => r.logged)))}</dl>
${scrollTable(
  'guardrails-caption',
  'Guardrail blocks and masks by key and guardrail',
  html`<thead><tr><th scope="col">Key</th><th scope="col">Guardrail</th><th scope="col">Calls matched</th><th scope="col">Blocked</th><th scope="col">Masked</th><th scope="col">Logged</th></tr></thead>
<tbody>${rows.map((r) => html`<tr><th scope="row">${r.key}</th><td>${r.guardrail}</td><td>${r.calls}</td><td>${r.blocked}</td><td>${r.masked}</td><td>${r.logged}</td></tr>`)}</tbody>`,
)}`;
}
