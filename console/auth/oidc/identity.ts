// Who an ID token names, as the Kubernetes API server would name them with the same flags: the user name from one
// claim and the groups from another, each with its prefix (--oidc-username-prefix, --oidc-groups-prefix). The same
// person then has the same rights whether they sign in here or present the token to the API server.
import type { JWTPayload } from 'jose';
import type { Principal } from '../principal.ts';
import { SignInRefused } from './client.ts';
import type { OidcSettings } from './settings.ts';

export function principalOf(claims: JWTPayload, s: Pick<OidcSettings, 'usernameClaim' | 'groupsClaim' | 'usernamePrefix' | 'groupsPrefix'>): Principal {
  const name = claims[s.usernameClaim];
  if (typeof name !== 'string' || name.trim() === '') {
    throw new SignInRefused(`The ID token has no "${s.usernameClaim}" claim to name you by; ask your administrator to check the console's settings.`);
  }
  // The API server refuses an email it is told is unverified: so does the console.
  if (s.usernameClaim === 'email' && claims.email_verified === false) throw new SignInRefused('Your email address is not verified by the identity provider.');
  const raw = claims[s.groupsClaim];
  const groups = (Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : []).filter((g): g is string => typeof g === 'string' && g !== '');
  return { kind: 'user', username: `${s.usernamePrefix}${name}`, uid: '', groups: groups.map((g) => `${s.groupsPrefix}${g}`), extra: {} };
}
