// Sign in (rate limited per client address), sign out (the session ends on the server).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clearedCookie, cookie, readCookie, sessionCookie } from '../auth/cookies.ts';
import { openToken, tokenExpiry } from '../auth/sign-in-token.ts';
import { loginPage } from '../pages/login.ts';
import { signedOutPage } from '../pages/oidc.ts';
import { sameToken } from './security.ts';
import { formOf, queryOf, sendHtml, userOf, type ConsoleDeps } from './context.ts';
import { safeNext } from './next-path.ts';
import { consoleBase } from './oidc-routes.ts';
import { noteAudit } from './audit-hook.ts';
import { principalName } from '../auth/principal.ts';

/** The sign-in form's CSRF token, double-submitted: a cookie and the same value in the form. */
const LOGIN_COOKIE = 'svc_console_login';

function showLogin(
  deps: ConsoleDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  o: { status: number; next: string; error?: string; notice?: string },
): FastifyReply {
  const csrf = randomBytes(24).toString('base64url');
  reply.header('set-cookie', cookie(req, { name: LOGIN_COOKIE, value: csrf, path: '/dashboard/login', maxAgeSec: 3600 }));
  return sendHtml(
    reply,
    o.status,
    loginPage({
      mode: deps.authn.mode,
      csrf,
      next: o.next,
      error: o.error,
      notice: o.notice,
      oidcName: deps.oidc?.client.settings.name,
      tokenSignIn: deps.tokenSignIn !== false,
    }),
  );
}

export function authRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/dashboard', async (_req, reply) => reply.redirect('/dashboard/keys', 303));
  app.get('/dashboard/', async (_req, reply) => reply.redirect('/dashboard/keys', 303));
  app.get('/dashboard/login', async (req, reply) => {
    const ended = queryOf(req).ended === 'token' ? 'Your session ended: the token you signed in with is no longer valid. Sign in again.' : undefined;
    if (queryOf(req).ended === 'sso') {
      const message = `Your session ended: ${deps.oidc?.client.settings.name ?? 'the identity provider'} no longer vouches for it. Sign in again.`;
      return showLogin(deps, req, reply, { status: 200, next: safeNext(queryOf(req).next), notice: message });
    }
    return showLogin(deps, req, reply, { status: 200, next: safeNext(queryOf(req).next), error: ended });
  });

  app.post('/dashboard/login', { config: { audit: { action: 'sign-in' } } }, async (req, reply) => {
    const form = formOf(req);
    const next = safeNext(form.next);
    // Token sign-in turned off (SVC_CONSOLE_TOKEN_SIGN_IN=0): the form is not offered, and a post of it is refused.
    if (deps.tokenSignIn === false) return showLogin(deps, req, reply, { status: 403, next, error: 'Signing in with a token is turned off here.' });
    const expected = readCookie(req, LOGIN_COOKIE);
    if (!expected || typeof form._csrf !== 'string' || !sameToken(form._csrf, expected)) {
      return showLogin(deps, req, reply, { status: 403, next, error: 'The sign-in form expired. Try again.' });
    }
    const now = deps.now();
    const wait = await deps.signInLimit.retryAfterSec(req.ip, now);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      return showLogin(deps, req, reply, { status: 429, next, error: `Too many failed sign-ins from your address. Try again in ${wait} seconds.` });
    }
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    const principal = token !== '' ? await deps.authn.authenticate(token) : null;
    if (!principal) {
      await deps.signInLimit.fail(req.ip, now);
      return showLogin(deps, req, reply, { status: 401, next, error: 'That token was not accepted.' });
    }
    // A token that can be withdrawn is kept (sealed) to be reviewed again; the session ends no later than it does.
    const again = deps.authn.reviewEveryMs === null ? undefined : { token, notAfter: tokenExpiry(token) };
    const { id, session } = await deps.sessions.create(principal, now, again);
    noteAudit(req, { actor: principalName(principal), subject: principal.kind === 'user' ? principal.uid : '' });
    reply.header('set-cookie', sessionCookie(req, id, Math.floor((session.expiresAt - now) / 1000)));
    return reply.redirect(next, 303);
  });

  app.post('/dashboard/logout', { config: { audit: { action: 'sign-out' } } }, async (req, reply) => {
    const id = userOf(req).sessionId;
    const session = await deps.sessions.get(id, deps.now());
    await deps.sessions.destroy(id);
    reply.header('set-cookie', clearedCookie(req));
    // Signed in through the provider: the console's session is over; the provider's own is offered to end too.
    if (session?.oidc && deps.oidc) {
      const idToken = openToken(id, session.oidc.sealedIdToken) ?? undefined;
      const endSessionUrl = await deps.oidc.client.endSessionUrl(idToken, `${consoleBase(deps, req)}/dashboard/login`);
      return sendHtml(reply, 200, signedOutPage({ providerName: deps.oidc.client.settings.name, endSessionUrl }));
    }
    return reply.redirect('/dashboard/login', 303);
  });
}
