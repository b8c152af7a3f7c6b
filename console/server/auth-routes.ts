// Sign in (rate limited per client address), sign out (the session ends on the server).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clearedCookie, cookie, readCookie, sessionCookie } from '../auth/cookies.ts';
import { tokenExpiry } from '../auth/sign-in-token.ts';
import { loginPage } from '../pages/login.ts';
import { sameToken } from './security.ts';
import { formOf, queryOf, sendHtml, userOf, type ConsoleDeps } from './context.ts';

/** The sign-in form's CSRF token, double-submitted: a cookie and the same value in the form. */
const LOGIN_COOKIE = 'svc_console_login';

function safeNext(next: string | undefined): string {
  return next && next.startsWith('/dashboard/') && !next.startsWith('//') && !next.includes('\\') ? next : '/dashboard/keys';
}

function showLogin(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply, o: { status: number; next: string; error?: string }): FastifyReply {
  const csrf = randomBytes(24).toString('base64url');
  reply.header('set-cookie', cookie(req, { name: LOGIN_COOKIE, value: csrf, path: '/dashboard/login', maxAgeSec: 3600 }));
  return sendHtml(reply, o.status, loginPage({ mode: deps.authn.mode, csrf, next: o.next, error: o.error }));
}

export function authRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/dashboard', async (_req, reply) => reply.redirect('/dashboard/keys', 303));
  app.get('/dashboard/', async (_req, reply) => reply.redirect('/dashboard/keys', 303));
  app.get('/dashboard/login', async (req, reply) => {
    const ended = queryOf(req).ended === 'token' ? 'Your session ended: the token you signed in with is no longer valid. Sign in again.' : undefined;
    return showLogin(deps, req, reply, { status: 200, next: safeNext(queryOf(req).next), error: ended });
  });

  app.post('/dashboard/login', async (req, reply) => {
    const form = formOf(req);
    const next = safeNext(form.next);
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
    reply.header('set-cookie', sessionCookie(req, id, Math.floor((session.expiresAt - now) / 1000)));
    return reply.redirect(next, 303);
  });

  app.post('/dashboard/logout', async (req, reply) => {
    await deps.sessions.destroy(userOf(req).sessionId);
    reply.header('set-cookie', clearedCookie(req));
    return reply.redirect('/dashboard/login', 303);
  });
}
