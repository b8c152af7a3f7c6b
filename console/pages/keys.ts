// /dashboard/keys: the account's keys (paginated on the server), the Create key form, and the show-once dialog.
import { html, type Html } from '../html.ts';
import type { CreatedKey, KeyPage, KeyRow } from '../keys/backend.ts';
import type { PlanLimits } from '../keys/key-spec.ts';
import type { FieldErrors } from '../keys/form.ts';
import { ageOf, highlightOf } from '../keys/lifetime.ts';
import { field, page, scrollTable, utc } from './layout.ts';
import { usd } from './money.ts';
import { policyHints } from '../keys/self-service-policy.ts';

export const PAGE_SIZE = 50;

export interface KeysView {
  /** The page's clock: ages, expiries and highlights are told against it. */
  now: number;
  user: { name: string; csrf: string };
  accounts: string[];
  account: string;
  /** May create keys (manage-keys, or create-own-keys for one's own). */
  canManage: boolean;
  /** The signed-in person's user name (their keys say "yours"); null for the admin token. */
  me?: string | null;
  /** Only the person's own keys are listed and theirs to act on (create-own-keys without manage-keys). */
  ownOnly?: boolean;
  /** Whether the person may rotate and revoke this key (default: canManage). */
  mayAct?: (r: KeyRow) => boolean;
  keys: KeyPage;
  pageNo: number;
  plan: PlanLimits;
  form?: Record<string, string>;
  errors?: FieldErrors & { form?: string };
  created?: CreatedKey & { curl: string };
  notice?: string;
}

export function accountSelector(path: string, accounts: string[], account: string, extra: Html = html``): Html {
  if (accounts.length <= 1) return html`<p>Account: <strong>${account}</strong></p>`;
  return html`<form method="get" action="${path}" class="inline"><label for="account">Account</label>
<select id="account" name="account">${accounts.map((a) => html`<option value="${a}"${a === account ? html` selected` : ''}>${a}</option>`)}</select>
${extra}<button type="submit">Show</button></form>`;
}

function stateCell(r: KeyRow): Html {
  if (r.state === 'Revoked') return html`<span class="state revoked">Revoked</span>`;
  if (r.state === 'Expired') return html`<span class="state revoked">Expired</span>`;
  if (r.revokeAt !== null) return html`<span class="state pending">Active, revoked at ${utc(r.revokeAt)} (rotated)</span>`;
  return html`<span class="state active">Active</span>`;
}

/** Age and expiry, with the reason to rotate in words (not only a colour): older than 90 days, or expiring within 14. */
/** The age goes under the creation time (its own column would widen the table past a laptop's width). */
function createdCell(r: KeyRow, now: number): Html {
  const h = highlightOf(r, now);
  const old = h?.kind === 'old' ? html`<br><strong class="attention">Older than 90 days: rotate it</strong>` : '';
  const created = r.createdAt ? utc(Date.parse(r.createdAt)) : 'from config';
  return html`<td><span class="nowrap">${created}</span>${r.createdBy ? html`<br><small>by ${r.createdBy}</small>` : ''}<br><small>age ${ageOf(r.createdAt, now)}</small>${old}</td>`;
}

function lifeCells(r: KeyRow, now: number): Html {
  const h = highlightOf(r, now);
  const note =
    h === null
      ? ''
      : h.kind === 'expiring'
        ? html`<br><strong class="attention">Expires ${h.days === 0 ? 'within a day' : `in ${h.days} day${h.days === 1 ? '' : 's'}`}: rotate it</strong>`
        : html`<br><strong class="attention">Older than 90 days: rotate it</strong>`;
  return html`<td>${r.expiresAt === null ? 'no expiry' : utc(r.expiresAt)}${h?.kind === 'expiring' ? note : ''}</td>`;
}

function row(v: KeysView, r: KeyRow): Html {
  const yours = v.me != null && r.createdBy === v.me ? html` <span class="state active">yours</span>` : '';
  const q = `account=${encodeURIComponent(r.account)}&name=${encodeURIComponent(r.name)}`;
  const actions =
    (v.mayAct ? v.mayAct(r) : v.canManage) && r.state !== 'Revoked'
      ? html`<a href="/dashboard/keys/rotate?${q}" aria-label="Rotate ${r.name}">Rotate</a> <a href="/dashboard/keys/revoke?${q}" aria-label="Revoke ${r.name}">Revoke</a>`
      : '';
  const attention = highlightOf(r, v.now) === null ? '' : html` class="attention"`;
  return html`<tr${attention}><th scope="row">${r.name}${yours}</th><td><code>${r.display}</code></td><td>${stateCell(r)}</td>
${createdCell(r, v.now)}
${lifeCells(r, v.now)}
<td class="nowrap">${r.lastUsedAt === null ? 'never' : utc(r.lastUsedAt)}</td>
<td>${usd(r.monthSpendNano)} / ${r.monthlyBudgetNano === null ? 'no budget' : usd(r.monthlyBudgetNano)}</td>
<td>${r.rpm ?? '—'}</td><td>${r.tpm ?? '—'}</td><td>${r.models === null ? 'all of the plan' : r.models.join(', ')}</td>
<td>${actions}</td></tr>`;
}

function pager(v: KeysView): Html {
  const pages = Math.max(1, Math.ceil(v.keys.total / PAGE_SIZE));
  if (pages <= 1) return html``;
  const href = (n: number): string => `/dashboard/keys?account=${encodeURIComponent(v.account)}&page=${n}`;
  return html`<nav aria-label="Pages" class="pager">${v.pageNo > 1 ? html`<a href="${href(v.pageNo - 1)}">Previous</a>` : ''}
<span>Page ${v.pageNo} of ${pages}</span>${v.pageNo < pages ? html`<a href="${href(v.pageNo + 1)}">Next</a>` : ''}</nav>`;
}

function createForm(v: KeysView): Html {
  const f = v.form ?? {};
  const e = v.errors ?? {};
  // A self-service person sees the caps their keys must keep (the server checks them).
  const caps = v.ownOnly && v.plan.selfService ? policyHints(v.plan.selfService) : { budget: null, models: null };
  return html`<section aria-labelledby="create-title" class="card"><h2 id="create-title">Create key</h2>
<form method="post" action="/dashboard/keys" novalidate>
<input type="hidden" name="_csrf" value="${v.user.csrf}"><input type="hidden" name="account" value="${v.account}">
${e.form ? html`<p class="error" role="alert">${e.form}</p>` : ''}
${field({ id: 'name', label: 'Name', value: f.name, error: e.name, hint: 'Lowercase letters, digits and hyphens.', attrs: html` required` })}
${field({ id: 'monthlyBudgetUsd', label: 'Monthly budget (USD)', value: f.monthlyBudgetUsd, error: e.monthlyBudgetNano, hint: caps.budget ?? 'Optional. Resets on the 1st (UTC).', attrs: html` inputmode="decimal"` })}
${field({ id: 'rpm', label: 'RPM limit', value: f.rpm, error: e.rpm, hint: `Optional; the plan allows ${v.plan.rpm ?? 'any number'}.`, attrs: html` inputmode="numeric"` })}
${field({ id: 'tpm', label: 'TPM limit', value: f.tpm, error: e.tpm, hint: `Optional; the plan allows ${v.plan.tpm ?? 'any number'}.`, attrs: html` inputmode="numeric"` })}
${field({ id: 'models', label: 'Models', value: f.models, error: e.models, hint: caps.models ?? 'Optional whitelist: model ids or globs, separated by commas or spaces.' })}
${field({ id: 'expiresInDays', label: 'Expires after (days)', value: f.expiresInDays, error: e.expiresAt, hint: expiryHint(v.plan), attrs: html` inputmode="numeric"${v.plan.keyPolicy?.requireExpiry ? html` required` : ''}` })}
<button type="submit">Create key</button>
</form></section>`;
}

function expiryHint(plan: PlanLimits): string {
  const p = plan.keyPolicy;
  const max = p?.maxKeyAgeDays;
  if (p?.requireExpiry) return `Required by this account's key policy${max === undefined ? '' : `: at most ${max} days`}. Rotating every 90 days is advised.`;
  if (max !== undefined) return `Optional; this account's key policy ends every key after ${max} days at the latest.`;
  return 'Optional; empty: the key never expires. Rotating every 90 days is advised.';
}

function createdDialog(v: KeysView): Html {
  const c = v.created;
  if (!c) return html``;
  const back = `/dashboard/keys?account=${encodeURIComponent(v.account)}`;
  return html`<section role="dialog" aria-modal="true" aria-labelledby="dialog-title" aria-describedby="dialog-warning" class="dialog">
<h2 id="dialog-title">Key ${c.row.name} created</h2>
<p id="dialog-warning" class="warning">Copy it now: this is the only time the full key is shown. It is stored only as a hash and cannot be recovered.</p>
<p><label for="new-key">Key</label><input id="new-key" readonly value="${c.key}" class="secret"></p>
<p><button type="button" data-copy="new-key">Copy</button> <span data-copy-status aria-live="polite"></span></p>
<p>Try it:</p><pre id="curl-example"><code>${c.curl}</code></pre>
<p><a class="button" href="${back}">Done, close</a></p>
</section>`;
}

export function keysPage(v: KeysView): Html {
  return page(
    { title: 'API keys', user: v.user, nav: 'keys' },
    html`
${accountSelector('/dashboard/keys', v.accounts, v.account)}
${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}
${createdDialog(v)}
${scrollTable(
  'keys-caption',
  v.ownOnly ? `Your keys in account ${v.account} (${v.keys.total})` : `Keys of account ${v.account} (${v.keys.total})`,
  html`<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">State</th><th scope="col">Created (age)</th><th scope="col">Expires</th><th scope="col">Last used</th>
<th scope="col">Month spend / budget</th><th scope="col">RPM</th><th scope="col">TPM</th><th scope="col">Models</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${v.keys.rows.length === 0 ? html`<tr><td colspan="11">No keys yet.</td></tr>` : v.keys.rows.map((r) => row(v, r))}</tbody>`,
)}
${pager(v)}
${v.canManage ? createForm(v) : html`<p>You may see this account's keys but not create, rotate or revoke them.</p>`}`,
  );
}
