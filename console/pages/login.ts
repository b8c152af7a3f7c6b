// The sign-in page: "Sign in with <provider>" first when OpenID Connect is set up, then (unless turned off) one token
// field (the admin token in standalone, a Kubernetes bearer token in a cluster).
import { html, type Html } from '../html.ts';
import { field, page } from './layout.ts';

export interface LoginView {
  mode: 'admin-token' | 'kubernetes';
  csrf: string;
  next: string;
  error?: string;
  /** A word above the forms (why a session ended). */
  notice?: string;
  /** The OpenID provider's display name, when OIDC sign-in is on. */
  oidcName?: string;
  /** Whether the token field is offered (SVC_CONSOLE_TOKEN_SIGN_IN). */
  tokenSignIn: boolean;
}

export function loginPage(o: LoginView): Html {
  const label = o.mode === 'admin-token' ? 'Admin token' : 'Kubernetes token';
  const hint =
    o.mode === 'admin-token'
      ? 'Printed by npm start next to the demo keys (or the value of SVC_CONSOLE_TOKEN).'
      : 'A ServiceAccount token (kubectl create token NAME) or an OIDC ID token the API server accepts.';
  // A GET form (its button the page's first): the browser goes to the provider with this page's return address.
  const sso = o.oidcName
    ? html`<form method="get" action="/dashboard/login/oidc" class="card narrow">
<input type="hidden" name="next" value="${o.next}">
<button type="submit">Sign in with ${o.oidcName}</button>
${!o.tokenSignIn && o.error ? html`<p class="error" role="alert">${o.error}</p>` : ''}
</form>`
    : '';
  const token = o.tokenSignIn
    ? html`<form method="post" action="/dashboard/login" class="card narrow">
${o.oidcName ? html`<h2>Or with a token</h2>` : ''}
<input type="hidden" name="_csrf" value="${o.csrf}"><input type="hidden" name="next" value="${o.next}">
${field({ id: 'token', label, type: 'password', hint, error: o.error, attrs: html` autocomplete="off" required` })}
<button type="submit">Sign in</button>
</form>`
    : '';
  const none = !o.oidcName && !o.tokenSignIn ? html`<p role="alert">No way to sign in is turned on: ask your administrator.</p>` : '';
  const notice = o.notice ? html`<p class="warning" role="alert">${o.notice}</p>` : '';
  return page({ title: 'Sign in' }, html`${notice}${sso}${token}${none}`);
}

const TITLES: Record<number, string> = { 400: 'Not understood', 403: 'Not allowed', 404: 'Not found', 409: 'Not done' };

export function errorPage(status: number, message: string, user?: { name: string; csrf: string }): Html {
  return page(
    { title: TITLES[status] ?? 'Something went wrong', user },
    html`<p role="alert">${message}</p><p><a href="/dashboard/keys">Back to the keys</a></p>`,
  );
}
