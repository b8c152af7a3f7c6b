// One audit record: who did what to which object, when, from where, and how it ended. Built from what the console
// knows of the request (never the form's secrets, the session, a token or a key): the person's user name and IdP
// subject, the action, the account and key name, the client address (after the trust-proxy setting) and the user agent.

export const AUDIT_ACTIONS = ['sign-in', 'sign-out', 'key-created', 'key-rotated', 'key-revoked', 'checkout-started', 'statement-downloaded'] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(s: unknown): s is AuditAction {
  return typeof s === 'string' && (AUDIT_ACTIONS as readonly string[]).includes(s);
}

/** success: done (2xx/3xx); refused: not allowed (401, 403, 429); failed: anything else (a bad form, a conflict). */
export type AuditOutcome = 'success' | 'refused' | 'failed';

/** How the person signed in: the company's OpenID provider, a Kubernetes token, the standalone admin token. */
export type SignInMethod = 'oidc' | 'token' | 'admin';

export interface AuditRecord {
  /** ms since the epoch */
  at: number;
  /** The account the action concerns; '' for the console as a whole (sign-in, sign-out). */
  account: string;
  /** The person's user name as the console names them (prefix included); '' when nobody was signed in. */
  actor: string;
  /** The IdP subject (`sub`), or the Kubernetes user's uid; '' when unknown. */
  subject: string;
  method: SignInMethod | '';
  action: AuditAction;
  /** The key's name (never the key), '' when the action has no object within the account. */
  object: string;
  outcome: AuditOutcome;
  /** The HTTP status the console answered with. */
  status: number;
  /** A short, secret-free sentence: the rotated key's successor, the amount, why a sign-in was refused. */
  detail: string;
  clientIp: string;
  userAgent: string;
}

export const USER_AGENT_MAX = 200;
export const DETAIL_MAX = 300;

export function outcomeOf(status: number): AuditOutcome {
  if (status < 400) return 'success';
  return status === 401 || status === 403 || status === 429 ? 'refused' : 'failed';
}

/** Control characters out (a log line or CSV row stays one line), then cut to `max` characters. */
export function clean(s: unknown, max: number): string {
  if (typeof s !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, max);
}

/** An account name as the API server allows object names (DNS subdomain); anything else is not recorded as one. */
export function accountName(s: unknown): string {
  return typeof s === 'string' && s.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(s) ? s : '';
}
