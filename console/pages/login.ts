// The sign-in page: one field (the admin token in standalone, a Kubernetes bearer token in a cluster).
import { html, type Html } from '../html.ts';
import { field, page } from './layout.ts';

export function loginPage(o: { mode: 'admin-token' | 'kubernetes'; csrf: string; next: string; error?: string }): Html {
  const label = o.mode === 'admin-token' ? 'Admin token' : 'Kubernetes token';
  const hint =
    o.mode === 'admin-token'
      ? 'Printed by npm start next to the demo keys (or the value of SVC_CONSOLE_TOKEN).'
      : 'A ServiceAccount token (kubectl create token NAME) or an OIDC ID token the API server accepts.';
  return page(
    { title: 'Sign in' },
    html`<form method="post" action="/dashboard/login" class="card narrow">
<input type="hidden" name="_csrf" value="${o.csrf}"><input type="hidden" name="next" value="${o.next}">
${field({ id: 'token', label, type: 'password', hint, error: o.error, attrs: html` autocomplete="off" required` })}
<button type="submit">Sign in</button>
</form>`,
  );
}

const TITLES: Record<number, string> = { 400: 'Not understood', 403: 'Not allowed', 404: 'Not found', 409: 'Not done' };

export function errorPage(status: number, message: string, user?: { name: string; csrf: string }): Html {
  return page(
    { title: TITLES[status] ?? 'Something went wrong', user },
    html`<p role="alert">${message}</p><p><a href="/dashboard/keys">Back to the keys</a></p>`,
  );
}
