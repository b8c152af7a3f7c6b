// /dashboard/activity: an account's audit trail (or the console-wide sign-ins), newest first, with filters in the URL,
// pages of PAGE_SIZE, and a CSV link carrying the same filters.
import { html, type Html } from '../html.ts';
import { AUDIT_ACTIONS, type AuditRecord } from '../audit/record.ts';
import { activityQuery, CONSOLE_WIDE, type ActivityParams } from '../audit/params.ts';
import type { AuditPage } from '../audit/store.ts';
import { page, scrollTable } from './layout.ts';

export const ACTIVITY_PAGE_SIZE = 50;

export const ACTION_LABELS: Record<(typeof AUDIT_ACTIONS)[number], string> = {
  'sign-in': 'Signed in',
  'sign-out': 'Signed out',
  'key-created': 'Key created',
  'key-rotated': 'Key rotated',
  'key-revoked': 'Key revoked',
  'checkout-started': 'Checkout started',
  'statement-downloaded': 'Statement downloaded',
};

export interface ActivityView {
  user: { name: string; csrf: string };
  /** Accounts the person may see the activity of, and whether the console-wide records too. */
  scopes: string[];
  params: ActivityParams;
  records: AuditPage;
  retentionDays: number;
  storedIn: 'postgres' | 'memory';
}

const scopeLabel = (s: string): string => (s === CONSOLE_WIDE ? 'Sign-ins (whole console)' : s);

function controls(v: ActivityView): Html {
  const p = v.params;
  const opt = (value: string, label: string, on: boolean): Html => html`<option value="${value}"${on ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/dashboard/activity" class="controls">
<div class="field"><label for="account">Account</label><select id="account" name="account">${v.scopes.map((s) => opt(s, scopeLabel(s), s === p.scope))}</select></div>
<div class="field"><label for="action">Action</label><select id="action" name="action">${opt('', 'Any', p.action === '')}${AUDIT_ACTIONS.map((a) => opt(a, ACTION_LABELS[a], a === p.action))}</select></div>
<div class="field"><label for="person">Person</label><input id="person" name="person" type="text" value="${p.actor}" maxlength="200"></div>
<div class="field"><label for="from">From</label><input id="from" name="from" type="date" value="${p.from}" aria-describedby="activity-dates-hint"></div>
<div class="field"><label for="to">To</label><input id="to" name="to" type="date" value="${p.to}" aria-describedby="activity-dates-hint"></div>
<button type="submit">Show</button>
<p id="activity-dates-hint" class="hint">Dates are UTC days, both included. Person matches part of the user name.</p>
</form>`;
}

function row(r: AuditRecord): Html {
  const when = new Date(r.at).toISOString().replace('T', ' ').slice(0, 19);
  return html`<tr><td class="nowrap">${when} UTC</td><th scope="row">${r.actor || '(unknown)'}${r.subject ? html`<br><span class="hint">${r.subject}</span>` : ''}</th>
<td>${ACTION_LABELS[r.action]}${r.method ? html` <span class="hint">(${r.method})</span>` : ''}</td><td>${r.object || '—'}</td>
<td>${r.outcome} (${r.status})</td><td>${r.detail || '—'}</td><td>${r.clientIp}</td><td class="ua">${r.userAgent}</td></tr>`;
}

function pager(v: ActivityView): Html {
  const pages = Math.max(1, Math.ceil(v.records.total / ACTIVITY_PAGE_SIZE));
  if (pages <= 1) return html``;
  const n = v.params.page;
  const href = (k: number): string => `/dashboard/activity?${activityQuery(v.params, k)}`;
  return html`<nav aria-label="Pages" class="pager">${n > 1 ? html`<a href="${href(n - 1)}">Previous</a>` : ''}
<span>Page ${n} of ${pages}</span>${n < pages ? html`<a href="${href(n + 1)}">Next</a>` : ''}</nav>`;
}

export function activityPage(v: ActivityView): Html {
  const p = v.params;
  const where = p.scope === CONSOLE_WIDE ? 'Sign-ins and sign-outs (whole console)' : `Activity of account ${p.scope}`;
  const kept =
    v.storedIn === 'postgres'
      ? `Records are kept for ${v.retentionDays} days.`
      : `Records are kept for ${v.retentionDays} days, in this console process's memory only (the latest ones; all are in its log): set DATABASE_URL to keep them in Postgres.`;
  return page(
    { title: 'Activity', user: v.user, nav: 'activity' },
    html`${controls(v)}
${scrollTable(
  'activity-caption',
  `${where} (${v.records.total})`,
  html`<thead><tr><th scope="col">Time</th><th scope="col">Person</th><th scope="col">Action</th><th scope="col">Key or file</th><th scope="col">Outcome</th><th scope="col">Detail</th><th scope="col">Address</th><th scope="col">Browser</th></tr></thead>
<tbody>${v.records.rows.length === 0 ? html`<tr><td colspan="8">Nothing recorded with these filters.</td></tr>` : v.records.rows.map(row)}</tbody>`,
)}
${pager(v)}
<p><a href="/dashboard/activity.csv?${activityQuery(p)}" download>Download CSV</a></p>
<p class="hint">${kept}</p>`,
  );
}
