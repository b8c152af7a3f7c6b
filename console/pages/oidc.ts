// The pages of an OpenID Connect sign-in: refused (why, and the way back), signed in (on to the console), signed out
// (and the provider's own sign-out offered).
import { escapeHtml, html, Html } from '../html.ts';
import { page } from './layout.ts';

export function refusedPage(message: string): Html {
  return page({ title: 'Sign-in refused' }, html`<p role="alert">${message}</p><p>You are not signed in. <a href="/dashboard/login">Back to sign-in</a></p>`);
}

/**
 * After the provider's redirect: the session cookie is SameSite=Strict, which a browser leaves out of a redirect chain
 * that began on another site; this page moves on by a navigation of its own (same site), so the cookie goes along.
 */
export function signedInPage(next: string): Html {
  const body = page({ title: 'Signed in' }, html`<p>You are signed in. <a href="${next}" id="continue">Continue to the console</a></p>`);
  return new Html(body.value.replace('<head>', `<head><meta http-equiv="refresh" content="0; url=${escapeHtml(next)}">`));
}

export function signedOutPage(o: { providerName: string; endSessionUrl: string | null }): Html {
  return page(
    { title: 'Signed out' },
    html`<p>You are signed out of the console.</p>
${o.endSessionUrl ? html`<p><a class="button" href="${o.endSessionUrl}">Sign out of ${o.providerName} too</a></p>` : ''}
<p><a href="/dashboard/login">Sign in again</a></p>`,
  );
}
