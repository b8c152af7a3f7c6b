// An OpenID Connect session outlives its ID token only through the refresh token: when the ID token expires, the
// console asks the provider for new tokens, checks the new ID token as at sign-in, and takes the person's groups from
// it again (a person removed from a group loses that group's rights at the next refresh). No refresh token, or the
// provider refusing it (the person disabled, the grant revoked): the session ends.
import { openToken, sealToken } from '../sign-in-token.ts';
import type { Session } from '../sessions.ts';
import type { OidcClient } from './client.ts';
import { principalOf } from './identity.ts';

// Renewals under way in this process, by session: requests arriving together at the ID token's expiry share one
// refresh grant (a provider that rotates refresh tokens would take a second use of the old one for a theft).
const inFlight = new Map<string, Promise<Session | null>>();

/** The session renewed, or null when it must end. */
export async function refreshedOidcSession(oidc: OidcClient | null, id: string, s: Session, now: number): Promise<Session | null> {
  const o = s.oidc;
  if (!o) return s;
  if (now < o.validUntil) return s;
  const running = inFlight.get(id);
  if (running) return running;
  const renewal = renew(oidc, id, s).finally(() => inFlight.delete(id));
  inFlight.set(id, renewal);
  return renewal;
}

async function renew(oidc: OidcClient | null, id: string, s: Session): Promise<Session | null> {
  const o = s.oidc as NonNullable<Session['oidc']>;
  const refresh = o.sealedRefresh === undefined ? null : openToken(id, o.sealedRefresh);
  if (!oidc || refresh === null) return null;
  try {
    const t = await oidc.refresh(refresh, o.sub);
    const principal = principalOf(t.claims, oidc.settings);
    if (principal.kind !== 'user' || s.principal.kind !== 'user' || principal.username !== s.principal.username) return null;
    return {
      ...s,
      principal,
      oidc: {
        sub: o.sub,
        ...(o.sid ? { sid: o.sid } : {}),
        sealedIdToken: sealToken(id, t.idToken),
        ...(t.refreshToken ? { sealedRefresh: sealToken(id, t.refreshToken) } : {}),
        validUntil: t.expiresAt,
      },
    };
  } catch {
    return null;
  }
}
