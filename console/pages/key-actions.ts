// The confirmation pages of Revoke (type the key's name) and Rotate (choose the grace period).
import { html, type Html } from '../html.ts';
import { GRACE_PERIODS } from '../keys/backend.ts';
import { field, page } from './layout.ts';

interface ActionView {
  user: { name: string; csrf: string };
  account: string;
  name: string;
  error?: string;
}

function hidden(v: ActionView): Html {
  return html`<input type="hidden" name="_csrf" value="${v.user.csrf}"><input type="hidden" name="account" value="${v.account}"><input type="hidden" name="name" value="${v.name}">`;
}

function back(v: ActionView): string {
  return `/dashboard/keys?account=${encodeURIComponent(v.account)}`;
}

export function revokePage(v: ActionView): Html {
  return page(
    { title: `Revoke key ${v.name}`, user: v.user, nav: 'keys' },
    html`<section role="dialog" aria-labelledby="revoke-title" class="dialog">
<h2 id="revoke-title">Revoke ${v.name} in account ${v.account}?</h2>
<p class="warning">Every gateway refuses this key (401) from its next request. A revoked key can never be used again.</p>
<form method="post" action="/dashboard/keys/revoke">${hidden(v)}
${field({ id: 'confirm', label: 'Type the key name to confirm', error: v.error, attrs: html` autocomplete="off" required` })}
<button type="submit" class="danger">Revoke key</button> <a href="${back(v)}">Cancel</a>
</form></section>`,
  );
}

export function rotatePage(v: ActionView): Html {
  return page(
    { title: `Rotate key ${v.name}`, user: v.user, nav: 'keys' },
    html`<section role="dialog" aria-labelledby="rotate-title" class="dialog">
<h2 id="rotate-title">Rotate ${v.name} in account ${v.account}</h2>
<p>A new key with the same settings is created and shown once. The old key keeps working until the grace period ends, then it is revoked.</p>
<form method="post" action="/dashboard/keys/rotate">${hidden(v)}
<div class="field"><label for="grace">Grace period</label>
<select id="grace" name="grace">${GRACE_PERIODS.map((g) => html`<option value="${g.value}"${g.value === '24h' ? html` selected` : ''}>${g.label}</option>`)}</select></div>
${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ''}
<button type="submit">Rotate key</button> <a href="${back(v)}">Cancel</a>
</form></section>`,
  );
}
