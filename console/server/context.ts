// What the console's routes share: its dependencies, and the signed-in session attached to each request.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator, Authorizer, Principal, Verb } from '../auth/principal.ts';
import type { OidcClient } from '../auth/oidc/client.ts';
import type { FlowStore } from '../auth/oidc/flows.ts';
import type { LogoutStore } from '../auth/oidc/logouts.ts';
import type { SessionStore } from '../auth/sessions.ts';
import type { SignInLimit } from '../auth/sign-in-limit.ts';
import type { BillingBackend } from '../../billing/backend.ts';
import type { Html } from '../html.ts';
import type { KeyBackend } from '../keys/backend.ts';
import type { UsageSource } from '../usage/report.ts';
import type { SignInMethod } from '../audit/record.ts';
import type { AuditTrail } from '../audit/trail.ts';

export interface ConsoleDeps {
  authn: Authenticator;
  authz: Authorizer;
  sessions: SessionStore;
  keys: KeyBackend;
  usage: UsageSource;
  signInLimit: SignInLimit;
  now: () => number;
  /** The model the curl example of a new key calls. */
  exampleModel: string;
  /** Base URL of the API for the curl example (default: the console's own origin). */
  apiBaseUrl?: string;
  /** Payments and the ledger (/dashboard/billing); without it the page is not served. */
  billing?: BillingBackend;
  /** The console's public URL for Stripe's return links and the OIDC redirect (default: the request's own origin). */
  publicBaseUrl?: string;
  /** OpenID Connect sign-in ("Sign in with <provider>"), when configured. */
  oidc?: { client: OidcClient; flows: FlowStore; logouts?: LogoutStore };
  /** Whether the token field (admin token, Kubernetes token) signs in; default true. */
  tokenSignIn?: boolean;
  /** Self-service keys (verb create-own-keys): how many unrevoked keys one person may own per account (default 5). */
  ownKeysMax?: number;
  /** The audit trail (the Activity page); default: kept in this process's memory. */
  audit?: AuditTrail;
}

export interface SignedIn {
  sessionId: string;
  principal: Principal;
  name: string;
  csrf: string;
  /** How they signed in and their IdP subject (or Kubernetes uid), for the audit trail. */
  method?: SignInMethod;
  subject?: string;
}

export function userOf(req: FastifyRequest): SignedIn {
  const s = (req as FastifyRequest & { consoleUser?: SignedIn }).consoleUser;
  if (!s) throw new Error('console route reached without a session');
  return s;
}

export function setUser(req: FastifyRequest, s: SignedIn): void {
  (req as FastifyRequest & { consoleUser?: SignedIn }).consoleUser = s;
}

export function sendHtml(reply: FastifyReply, status: number, body: Html): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body.value);
}

/** A form's fields as strings (the urlencoded parser gives an object of strings; anything else gives {}). */
export function formOf(req: FastifyRequest): Record<string, string> {
  const b = req.body;
  return b && typeof b === 'object' ? (b as Record<string, string>) : {};
}

export function queryOf(req: FastifyRequest): Record<string, string | undefined> {
  return (req.query ?? {}) as Record<string, string | undefined>;
}

/** The accounts the user may act on with `verb`, in order. */
export async function accountsWith(deps: ConsoleDeps, p: Principal, verb: Verb): Promise<string[]> {
  const all = await deps.keys.accounts();
  const ok = await Promise.all(all.map((a) => deps.authz.allowed(p, verb, a)));
  return all.filter((_, i) => ok[i]);
}

export class Forbidden extends Error {}
