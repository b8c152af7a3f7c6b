// The page shell: one stylesheet and one script from /dashboard/static (CSP: nothing inline), a skip link, the
// navigation, and the sign-out form (a POST with the CSRF token).
import { html, type Html } from '../html.ts';

export interface Shell {
  title: string;
  /** Signed-in user's name and CSRF token; absent on the sign-in page. */
  user?: { name: string; csrf: string };
  nav?: 'keys' | 'usage' | 'billing' | 'activity';
}

export function page(s: Shell, body: Html): Html {
  const link = (href: string, label: string, id: Shell['nav']): Html => html`<a href="${href}"${s.nav === id ? html` aria-current="page"` : ''}>${label}</a>`;
  const header = s.user
    ? html`<header class="top"><nav aria-label="Console">${link('/dashboard/keys', 'Keys', 'keys')} ${link('/dashboard/usage', 'Usage', 'usage')} ${link('/dashboard/billing', 'Billing', 'billing')} ${link('/dashboard/activity', 'Activity', 'activity')}</nav>
<form method="post" action="/dashboard/logout" class="signout"><span>Signed in as ${s.user.name}</span>
<input type="hidden" name="_csrf" value="${s.user.csrf}"><button type="submit">Sign out</button></form></header>`
    : html`<header class="top"><span class="brand">svc-gateway console</span></header>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${s.title} · svc-gateway console</title>
<link rel="stylesheet" href="/dashboard/static/console.css">
<script src="/dashboard/static/console.js" defer></script>
</head><body><a class="skip" href="#main">Skip to content</a>
${header}
<main id="main"><h1>${s.title}</h1>
${body}
</main></body></html>`;
}

export function field(o: { id: string; label: string; value?: string; error?: string; type?: string; hint?: string; attrs?: Html }): Html {
  const described = [o.hint ? `${o.id}-hint` : '', o.error ? `${o.id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field"><label for="${o.id}">${o.label}</label>
${o.hint ? html`<p class="hint" id="${o.id}-hint">${o.hint}</p>` : ''}
<input id="${o.id}" name="${o.id}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"${described ? html` aria-describedby="${described}"` : ''}${o.error ? html` aria-invalid="true"` : ''}${o.attrs ?? ''}>
${o.error ? html`<p class="error" id="${o.id}-error">${o.error}</p>` : ''}</div>`;
}

export function utc(ms: number | null): string {
  if (ms === null) return '—';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * A table in a region of its own that scrolls sideways when the table is wider than the screen (a phone), so the page
 * never does: named by the table's caption, focusable so keyboard users can scroll it too.
 */
export function scrollTable(id: string, caption: Html | string, inner: Html, cls = ''): Html {
  return html`<div class="table-scroll" role="region" aria-labelledby="${id}" tabindex="0"><table${cls ? html` class="${cls}"` : ''}><caption id="${id}">${caption}</caption>
${inner}</table></div>`;
}
