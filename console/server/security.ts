// Headers on every console answer, the session check of every page, and the CSRF check of every POST.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalName } from '../auth/principal.ts';
import { reviewedSession } from '../auth/session-review.ts';
import { clearedCookie, readCookie, SESSION_COOKIE } from '../auth/cookies.ts';
import { errorPage } from '../pages/login.ts';
import { sendHtml, setUser, type ConsoleDeps } from './context.ts';

// form-action also names Stripe Checkout: Add credits answers its POST with a redirect there (billing-routes.ts); and
// the OpenID provider, where "Sign in with <provider>" is redirected.
export function csp(extraFormActions: string[] = []): string {
  const actions = ["'self'", 'https://checkout.stripe.com', ...extraFormActions].join(' ');
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action ${actions}; frame-ancestors 'none'; base-uri 'none'`;
}

export const CSP = csp();

const PUBLIC = new Set([
  '/dashboard/login',
  '/dashboard/login/oidc',
  '/dashboard/login/oidc/callback',
  // The provider's server posts logout tokens here: no session, no CSRF token; the token's signature is the check.
  '/dashboard/login/oidc/backchannel-logout',
  '/dashboard/static/console.css',
  '/dashboard/static/console.js',
]);

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

function path(req: FastifyRequest): string {
  const q = req.url.indexOf('?');
  return q < 0 ? req.url : req.url.slice(0, q);
}

export function securityHooks(app: FastifyInstance, deps: ConsoleDeps): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', deps.oidc ? csp(deps.oidc.client.formActionOrigins()) : CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cache-control', 'no-store');
    // The API's CORS headers do not belong on console pages.
    reply.removeHeader('access-control-allow-origin');
    reply.removeHeader('access-control-expose-headers');
    return payload;
  });
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    if (PUBLIC.has(path(req))) return;
    const id = readCookie(req, SESSION_COOKIE);
    const now = deps.now();
    const found = id ? await deps.sessions.get(id, now) : null;
    const session =
      id && found
        ? await reviewedSession({ authn: deps.authn, sessions: deps.sessions, oidc: deps.oidc?.client ?? null, logouts: deps.oidc?.logouts }, id, found, now)
        : null;
    if (!id || !session) {
      if (id) reply.header('set-cookie', clearedCookie(req));
      // Its token withdrawn: the session ends here, and the sign-in page says why.
      if (id && found) await deps.sessions.destroy(id);
      const ended: Record<string, string> = id && found ? { ended: found.oidc ? 'sso' : 'token' } : {};
      const query = new URLSearchParams({ ...ended, ...(req.method === 'GET' ? { next: req.url } : {}) });
      return reply
        .code(303)
        .header('location', `/dashboard/login${query.size > 0 ? `?${query}` : ''}`)
        .send();
    }
    if (req.method === 'POST') {
      const token = (req.body as Record<string, unknown> | undefined)?._csrf;
      if (typeof token !== 'string' || !sameToken(token, session.csrf)) {
        return sendHtml(
          reply,
          403,
          errorPage(403, 'This form has expired or did not come from this console (CSRF token missing or wrong). Reload the page and try again.'),
        );
      }
    }
    const p = session.principal;
    const method = session.oidc ? 'oidc' : p.kind === 'admin' ? 'admin' : 'token';
    const subject = session.oidc?.sub ?? (p.kind === 'user' ? p.uid : '');
    setUser(req, { sessionId: id, principal: p, name: principalName(p), csrf: session.csrf, method, subject });
  });
}
