// OpenID Connect sign-in: GET /dashboard/login/oidc starts it (the flow kept on the server, its id in a short-lived
// cookie of this browser), GET /dashboard/login/oidc/callback finishes it. Every refusal is a page saying why, with no
// session made, and counts as a failed sign-in of the address (the same limit as the token form).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cookie, readCookie, sessionCookie } from '../auth/cookies.ts';
import { SignInRefused } from '../auth/oidc/client.ts';
import { LogoutRefused } from '../auth/oidc/logout-token.ts';
import { principalOf } from '../auth/oidc/identity.ts';
import { refusedPage, signedInPage } from '../pages/oidc.ts';
import { DEFAULT_NEXT, isConsolePath } from './next-path.ts';
import { queryOf, sendHtml, type ConsoleDeps } from './context.ts';
import { noteAudit } from './audit-hook.ts';

const FLOW_COOKIE = 'svc_console_oidc';
const FLOW_PATH = '/dashboard/login/oidc';
export const CALLBACK_PATH = '/dashboard/login/oidc/callback';
/** Where the provider posts logout tokens (its client's backchannel_logout_uri). */
export const BACKCHANNEL_LOGOUT_PATH = '/dashboard/login/oidc/backchannel-logout';

/** The flow cookie must come back on the provider's redirect (a top-level GET from another site): SameSite=Lax. */
function flowCookie(req: FastifyRequest, value: string, maxAgeSec: number): string {
  return cookie(req, { name: FLOW_COOKIE, value, path: FLOW_PATH, maxAgeSec }).replace('SameSite=Strict', 'SameSite=Lax');
}

export function consoleBase(deps: ConsoleDeps, req: FastifyRequest): string {
  return (deps.publicBaseUrl ?? `${req.protocol}://${req.host}`).replace(/\/$/, '');
}

export function oidcRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const oidc = deps.oidc;
  if (!oidc) return;

  const refuse = async (req: FastifyRequest, reply: FastifyReply, status: number, message: string): Promise<FastifyReply> => {
    await deps.signInLimit.fail(req.ip, deps.now());
    noteAudit(req, { detail: message });
    reply.header('set-cookie', flowCookie(req, '', 0));
    return sendHtml(reply, status, refusedPage(message));
  };

  const limited = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | null> => {
    const wait = await deps.signInLimit.retryAfterSec(req.ip, deps.now());
    if (wait <= 0) return null;
    reply.header('retry-after', String(wait));
    return sendHtml(reply, 429, refusedPage(`Too many failed sign-ins from your address. Try again in ${wait} seconds.`));
  };

  app.get(FLOW_PATH, { config: { audit: { action: 'sign-in', failuresOnly: true } } }, async (req, reply) => {
    const stop = await limited(req, reply);
    if (stop) return stop;
    const asked: unknown = queryOf(req).next;
    // A return address that is not a console page is refused outright, not quietly replaced: someone built that link.
    if (asked !== undefined && asked !== '' && (typeof asked !== 'string' || !isConsolePath(asked))) {
      return refuse(req, reply, 400, 'That sign-in link asks to go back to an address outside the console afterwards; it was refused.');
    }
    const redirectUri = `${consoleBase(deps, req)}${CALLBACK_PATH}`;
    let flow;
    try {
      flow = await oidc.client.start(redirectUri);
    } catch (err) {
      req.log.warn({ err }, 'OpenID provider discovery failed');
      return sendHtml(reply, 503, refusedPage(`${oidc.client.settings.name} cannot be reached right now. Try again in a minute.`));
    }
    const id = await oidc.flows.put(
      {
        state: flow.state,
        nonce: flow.nonce,
        codeVerifier: flow.codeVerifier,
        redirectUri,
        next: typeof asked === 'string' && asked !== '' ? asked : DEFAULT_NEXT,
      },
      deps.now(),
    );
    reply.header('set-cookie', flowCookie(req, id, 600));
    return reply.redirect(flow.url.href, 303);
  });

  // Back-channel logout: the provider's server posts a signed logout token (form field logout_token); the sessions it
  // names end at their next request, in every console process sharing the Redis. Answers as the specification
  // says: 200, or 400 with an OAuth error body; never cached.
  app.post(BACKCHANNEL_LOGOUT_PATH, { logLevel: 'warn' }, async (req, reply) => {
    reply.header('cache-control', 'no-store');
    const token = (req.body as Record<string, unknown> | undefined)?.logout_token;
    if (typeof token !== 'string' || token === '' || !oidc.logouts) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'Send the logout token as the form field logout_token.' });
    }
    try {
      const mark = await oidc.client.logoutMark(token);
      await oidc.logouts.mark(mark, deps.now());
      app.log.info({ reqId: req.id, sub: mark.sub, sid: mark.sid === undefined ? undefined : 'given' }, 'Console back-channel logout (OpenID Connect)');
      return reply.code(200).send();
    } catch (err) {
      if (!(err instanceof LogoutRefused)) throw err;
      app.log.warn({ reqId: req.id, ip: req.ip, reason: err.message }, 'Console back-channel logout refused');
      return reply.code(400).send({ error: 'invalid_request', error_description: err.message });
    }
  });

  // The callback's URL carries the authorization code: the request log (info) leaves it out; what happened is logged
  // below without it.
  app.get(CALLBACK_PATH, { logLevel: 'warn', config: { audit: { action: 'sign-in' } } }, async (req, reply) => {
    const stop = await limited(req, reply);
    if (stop) return stop;
    const now = deps.now();
    const id = readCookie(req, FLOW_COOKIE);
    if (!id) {
      return refuse(req, reply, 400, 'This sign-in was not started in this browser (or took more than 10 minutes). Start again from the sign-in page.');
    }
    const flow = await oidc.flows.take(id, now);
    if (!flow) return refuse(req, reply, 400, 'This sign-in answer was already used or has expired: each works once. Start again from the sign-in page.');
    const q = queryOf(req);
    if (q.error) {
      const said = String(q.error_description ?? q.error).slice(0, 200);
      return refuse(req, reply, 401, `${oidc.client.settings.name} did not sign you in: ${said}`);
    }
    const url = new URL(flow.redirectUri);
    url.search = new URL(req.url, 'http://x').search;
    try {
      const t = await oidc.client.finish(url, flow);
      const principal = principalOf(t.claims, oidc.client.settings);
      const { id: sid, session } = await deps.sessions.create(principal, now, undefined, {
        sub: String(t.claims.sub),
        ...(typeof t.claims.sid === 'string' ? { sid: t.claims.sid } : {}),
        idToken: t.idToken,
        refreshToken: t.refreshToken,
        expiresAt: t.expiresAt,
      });
      reply.header('set-cookie', [flowCookie(req, '', 0), sessionCookie(req, sid, Math.max(1, Math.floor((session.expiresAt - now) / 1000)))]);
      noteAudit(req, { actor: principal.kind === 'user' ? principal.username : '', subject: String(t.claims.sub) });
      const who = principal.kind === 'user' ? { user: principal.username, groups: principal.groups } : {};
      app.log.info({ reqId: req.id, ip: req.ip, ...who, sub: t.claims.sub }, 'Console sign-in (OpenID Connect)');
      return sendHtml(reply, 200, signedInPage(flow.next));
    } catch (err) {
      if (err instanceof SignInRefused) {
        app.log.info({ reqId: req.id, ip: req.ip, reason: err.message }, 'Console sign-in refused (OpenID Connect)');
        return refuse(req, reply, 401, err.message);
      }
      throw err;
    }
  });
}
