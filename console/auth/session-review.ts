// A session is only as good as the token it was opened with: every `reviewedEveryMs` the sealed token is shown to the
// API server again (TokenReview); a token it no longer accepts, or one that now names someone else, ends the session.
// An OpenID Connect session is renewed with its refresh token when its ID token expires (oidc/refresh.ts).
import { principalName, type Authenticator } from './principal.ts';
import type { OidcClient } from './oidc/client.ts';
import { refreshedOidcSession } from './oidc/refresh.ts';
import { openToken } from './sign-in-token.ts';
import type { LogoutStore } from './oidc/logouts.ts';
import type { Session, SessionStore } from './sessions.ts';

/** The session, reviewed when due (its principal refreshed: groups may have changed); null when it must end. */
export async function reviewedSession(
  by: { authn: Authenticator; sessions: SessionStore; oidc: OidcClient | null; logouts?: LogoutStore },
  id: string,
  s: Session,
  now: number,
): Promise<Session | null> {
  const { authn, sessions, oidc } = by;
  if (s.oidc) {
    // Ended at the provider and told by a back-channel logout.
    if (by.logouts && (await by.logouts.ended({ sub: s.oidc.sub, sid: s.oidc.sid, createdAt: s.createdAt }))) return null;
    const next = await refreshedOidcSession(oidc, id, s, now);
    if (next && next !== s) await sessions.update(id, next, now);
    return next;
  }
  const every = authn.reviewEveryMs;
  if (every === null) return s;
  // A session without a token cannot be reviewed (e.g. opened by an older version): signing in again makes one.
  if (s.sealedToken === undefined) return null;
  if (now - (s.reviewedAt ?? s.createdAt) < every) return s;
  const token = openToken(id, s.sealedToken);
  const p = token === null ? null : await authn.authenticate(token);
  if (p === null || p.kind !== s.principal.kind || principalName(p) !== principalName(s.principal)) return null;
  const next: Session = { ...s, principal: p, reviewedAt: now };
  await sessions.update(id, next, now);
  return next;
}
