// The claims of a back-channel logout token (OpenID Connect Back-Channel Logout 1.0, section 2.6), after its
// signature, issuer, audience and iat were checked by jose: the logout event, no nonce, and a sub or a sid.
import type { JWTPayload } from 'jose';
import type { LogoutMark } from './logouts.ts';

export const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** Why a logout token was refused, in words for the provider's log (never the token). */
export class LogoutRefused extends Error {}

export function logoutMarkOf(claims: JWTPayload): LogoutMark {
  const events = claims.events as Record<string, unknown> | undefined;
  const event = events && typeof events === 'object' ? events[LOGOUT_EVENT] : undefined;
  if (!event || typeof event !== 'object' || Array.isArray(event)) throw new LogoutRefused('The logout token has no back-channel logout event.');
  if ('nonce' in claims) throw new LogoutRefused('A logout token must not carry a nonce.');
  if (typeof claims.jti !== 'string' || claims.jti === '') throw new LogoutRefused('The logout token has no jti.');
  const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
  const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : undefined;
  if (!sub && !sid) throw new LogoutRefused('The logout token names neither a subject (sub) nor a session (sid).');
  return { ...(sub ? { sub } : {}), ...(sid ? { sid } : {}) };
}
