// The console's OpenID Connect settings, read from the environment (the same names for `npm start` and
// `npm run console`; the chart's console.oidc values set them). Without SVC_CONSOLE_OIDC_ISSUER there is no OIDC
// sign-in. The client secret is read from a file (the chart mounts it from a Secret), never from a variable's value.
import { readFileSync } from 'node:fs';

type Env = Record<string, string | undefined>;

export interface OidcSettings {
  issuer: URL;
  clientId: string;
  /** Absent: a public client (PKCE only, no client authentication). */
  clientSecret?: string;
  scopes: string[];
  usernameClaim: string;
  groupsClaim: string;
  usernamePrefix: string;
  groupsPrefix: string;
  /** "Sign in with <name>". */
  name: string;
}

function loopback(u: URL): boolean {
  return u.hostname === 'localhost' || u.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(u.hostname);
}

/** Plain http only for an issuer on this machine (a test, a developer's provider): anything else must be https. */
export function insecureAllowed(issuer: URL): boolean {
  return issuer.protocol === 'http:' && loopback(issuer);
}

export function oidcSettingsFromEnv(env: Env): OidcSettings | null {
  const raw = env.SVC_CONSOLE_OIDC_ISSUER?.trim();
  if (!raw) return null;
  let issuer: URL;
  try {
    issuer = new URL(raw);
  } catch {
    throw new Error(`SVC_CONSOLE_OIDC_ISSUER is not a URL: ${raw}`);
  }
  if (issuer.protocol !== 'https:' && !insecureAllowed(issuer)) {
    throw new Error('SVC_CONSOLE_OIDC_ISSUER must be an https URL (plain http only for a provider on 127.0.0.1 or localhost).');
  }
  const clientId = env.SVC_CONSOLE_OIDC_CLIENT_ID?.trim();
  if (!clientId) throw new Error('SVC_CONSOLE_OIDC_ISSUER is set but SVC_CONSOLE_OIDC_CLIENT_ID is not.');
  const secretFile = env.SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE?.trim();
  let clientSecret: string | undefined;
  if (secretFile) {
    try {
      clientSecret = readFileSync(secretFile, 'utf8').trim();
    } catch {
      throw new Error(`SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: cannot read ${secretFile}.`);
    }
    if (!clientSecret) throw new Error(`SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE: ${secretFile} is empty.`);
  }
  const scopes = (env.SVC_CONSOLE_OIDC_SCOPES || 'openid profile email').split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes('openid')) scopes.unshift('openid');
  return {
    issuer,
    clientId,
    clientSecret,
    scopes,
    usernameClaim: env.SVC_CONSOLE_OIDC_USERNAME_CLAIM || 'sub',
    groupsClaim: env.SVC_CONSOLE_OIDC_GROUPS_CLAIM || 'groups',
    usernamePrefix: env.SVC_CONSOLE_OIDC_USERNAME_PREFIX ?? '',
    groupsPrefix: env.SVC_CONSOLE_OIDC_GROUPS_PREFIX ?? '',
    name: env.SVC_CONSOLE_OIDC_NAME?.trim() || 'single sign-on',
  };
}

/** SVC_CONSOLE_TOKEN_SIGN_IN=0 turns off the token field (the admin token standalone, a Kubernetes token in a cluster). */
export function tokenSignInFromEnv(env: Env): boolean {
  const v = (env.SVC_CONSOLE_TOKEN_SIGN_IN ?? '1').trim().toLowerCase();
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') {
    // Nobody could sign in at all.
    if (!env.SVC_CONSOLE_OIDC_ISSUER?.trim()) throw new Error('SVC_CONSOLE_TOKEN_SIGN_IN=0 needs SVC_CONSOLE_OIDC_ISSUER: without either, nobody can sign in.');
    return false;
  }
  throw new Error('SVC_CONSOLE_TOKEN_SIGN_IN must be 1 or 0.');
}

/** SVC_CONSOLE_SESSION_HOURS: the longest a session lasts (default 8), whatever the tokens say. */
export function sessionTtlFromEnv(env: Env): number {
  const raw = env.SVC_CONSOLE_SESSION_HOURS;
  if (raw === undefined || raw.trim() === '') return 8 * 3600_000;
  const h = Number(raw);
  if (!Number.isFinite(h) || h <= 0 || h > 24 * 30) throw new Error('SVC_CONSOLE_SESSION_HOURS must be a number of hours above 0 and at most 720.');
  return Math.round(h * 3600_000);
}

/** SVC_CONSOLE_OWN_KEYS_MAX: how many unrevoked keys one person may own per account with create-own-keys (5). */
export function ownKeysMaxFromEnv(env: Env): number {
  const raw = env.SVC_CONSOLE_OWN_KEYS_MAX;
  if (raw === undefined || raw.trim() === '') return 5;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error('SVC_CONSOLE_OWN_KEYS_MAX must be a whole number from 1 to 1000.');
  return n;
}
