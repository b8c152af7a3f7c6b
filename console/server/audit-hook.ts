// The audit trail as one hook around the console's routes (not a thread through each handler): a route that is an
// action names it in its config (`{ config: { audit: { action: 'key-revoked' } } }`); when its answer has gone, the
// hook records who (the session's person, or who a sign-in named), the account and key name of the form or query,
// the status as the outcome, the client address (the trust-proxy setting applied) and the user agent. A handler adds
// what only it knows (the account it chose, a rotated key's successor, why a sign-in was refused) with noteAudit().
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditTrail } from '../audit/trail.ts';
import { accountName, clean, DETAIL_MAX, outcomeOf, USER_AGENT_MAX, type AuditAction, type SignInMethod } from '../audit/record.ts';
import { isKeyName } from '../keys/key-name.ts';
import type { ConsoleDeps, SignedIn } from './context.ts';

export interface AuditRoute {
  action: AuditAction;
  /** Only refusals are records (the start of an OpenID sign-in: its success is the callback's). */
  failuresOnly?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    audit?: AuditRoute;
  }
}

export interface AuditNote {
  account?: string;
  object?: string;
  detail?: string;
  /** Who a sign-in named (no session exists on that request yet). */
  actor?: string;
  subject?: string;
  method?: SignInMethod;
}

type Noted = FastifyRequest & { auditNote?: AuditNote; consoleUser?: SignedIn };

export function noteAudit(req: FastifyRequest, note: AuditNote): void {
  const r = req as Noted;
  r.auditNote = { ...r.auditNote, ...note };
}

function fields(req: FastifyRequest): Record<string, unknown> {
  const src = req.method === 'POST' ? req.body : req.query;
  return src && typeof src === 'object' ? (src as Record<string, unknown>) : {};
}

export function auditHook(app: FastifyInstance, deps: ConsoleDeps, trail: AuditTrail): void {
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.config.audit;
    if (!route) return;
    const status = reply.statusCode;
    if (route.failuresOnly && status < 400) return;
    const r = req as Noted;
    const note = r.auditNote ?? {};
    const user = r.consoleUser;
    const signIn = route.action === 'sign-in';
    // An action by nobody (no session, or a form without its CSRF token): refused before any handler, not a record.
    if (!signIn && !user) return;
    const f = fields(req);
    const name = note.object ?? (typeof f.name === 'string' && isKeyName(f.name) ? f.name : '');
    const fromOidc = req.url.startsWith('/dashboard/login/oidc');
    const method: SignInMethod | '' =
      note.method ?? user?.method ?? (signIn ? (fromOidc ? 'oidc' : deps.authn.mode === 'admin-token' ? 'admin' : 'token') : '');
    await trail.record({
      at: deps.now(),
      account: signIn || route.action === 'sign-out' ? '' : accountName(note.account ?? f.account),
      actor: clean(note.actor ?? user?.name ?? '', 300),
      subject: clean(note.subject ?? user?.subject ?? '', 300),
      method,
      action: route.action,
      object: clean(name, 300),
      outcome: outcomeOf(status),
      status,
      detail: clean(note.detail ?? (signIn && status >= 400 ? refusalOf(status) : ''), DETAIL_MAX),
      clientIp: clean(req.ip, 100),
      userAgent: clean(req.headers['user-agent'] ?? '', USER_AGENT_MAX),
    });
  });
}

function refusalOf(status: number): string {
  if (status === 401) return 'The credentials were not accepted.';
  if (status === 429) return 'Too many failed sign-ins from this address.';
  if (status === 403) return 'The sign-in form had expired, or this way of signing in is turned off.';
  return `Refused (${status}).`;
}
