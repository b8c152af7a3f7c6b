// The console as an OpenID Connect relying party, on openid-client (certified) and jose: discovery from the issuer
// URL (retried on the next sign-in when the provider is down), the authorization code flow with PKCE (S256), state and
// nonce, and the ID token checked twice: by openid-client (issuer, audience, expiry, nonce, and its signature with the
// provider's published keys: non-repudiation checks on) and by jose against the same keys with only asymmetric
// algorithms allowed (so neither `alg: none` nor an HMAC keyed with the public key can pass).
import * as client from 'openid-client';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { insecureAllowed, type OidcSettings } from './settings.ts';
import { LogoutRefused, logoutMarkOf } from './logout-token.ts';
import type { LogoutMark } from './logouts.ts';

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** A sign-in started: where to send the browser, and what the callback must find again. */
export interface StartedFlow {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface TokenSet {
  idToken: string;
  claims: JWTPayload;
  refreshToken?: string;
  /** When the ID token stops being valid (ms). */
  expiresAt: number;
}

/** Why a callback was refused, in words for the page (never a token). */
export class SignInRefused extends Error {}

export class OidcClient {
  readonly settings: OidcSettings;
  private config: client.Configuration | null = null;
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;
  private discovering: Promise<client.Configuration> | null = null;

  constructor(settings: OidcSettings) {
    this.settings = settings;
  }

  /** The provider's metadata, fetched once (a failed discovery is tried again at the next use). */
  async configuration(): Promise<client.Configuration> {
    if (this.config) return this.config;
    this.discovering ??= this.discover().finally(() => (this.discovering = null));
    return this.discovering;
  }

  private async discover(): Promise<client.Configuration> {
    const s = this.settings;
    const auth = s.clientSecret ? client.ClientSecretBasic(s.clientSecret) : client.None();
    const insecure = insecureAllowed(s.issuer) ? [client.allowInsecureRequests] : [];
    const config = await client.discovery(s.issuer, s.clientId, undefined, auth, { execute: [...insecure, client.enableNonRepudiationChecks] });
    const jwksUri = config.serverMetadata().jwks_uri;
    if (!jwksUri) throw new Error(`The OpenID provider ${s.issuer.href} publishes no jwks_uri.`);
    this.jwks = createRemoteJWKSet(new URL(jwksUri));
    this.config = config;
    return config;
  }

  /** Origins the browser is sent to by a form (the CSP's form-action): the issuer's, the authorization endpoint's. */
  formActionOrigins(): string[] {
    const out = new Set([this.settings.issuer.origin]);
    const auth = this.config?.serverMetadata().authorization_endpoint;
    if (auth) out.add(new URL(auth).origin);
    return [...out];
  }

  async start(redirectUri: string): Promise<StartedFlow> {
    const config = await this.configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url, state, nonce, codeVerifier };
  }

  /** The callback's code exchanged (PKCE verifier, state and nonce of the flow), the ID token checked. */
  async finish(callbackUrl: URL, flow: { state: string; nonce: string; codeVerifier: string }): Promise<TokenSet> {
    const config = await this.configuration();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: flow.codeVerifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw new SignInRefused(refusalMessage(err));
    }
    return this.checked(tokens, flow.nonce);
  }

  /** A refresh: new tokens, the new ID token checked as a sign-in's is (same subject as before). */
  async refresh(refreshToken: string, subject: string): Promise<TokenSet> {
    const config = await this.configuration();
    let tokens: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
    try {
      tokens = await client.refreshTokenGrant(config, refreshToken);
    } catch (err) {
      throw new SignInRefused(refusalMessage(err));
    }
    const set = await this.checked(tokens, null, refreshToken);
    if (set.claims.sub !== subject) throw new SignInRefused('The identity provider answered for another person.');
    return set;
  }

  private async checked(
    tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
    nonce: string | null,
    oldRefresh?: string,
  ): Promise<TokenSet> {
    const idToken = tokens.id_token;
    if (!idToken) throw new SignInRefused('The identity provider sent no ID token.');
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(idToken, this.jwks as NonNullable<typeof this.jwks>, {
        // The discovered issuer (openid-client checked it is the configured one).
        issuer: this.issuerId(),
        audience: this.settings.clientId,
        algorithms: ASYMMETRIC,
        requiredClaims: ['exp', 'iat', 'sub'],
      }));
    } catch (err) {
      throw new SignInRefused(`The ID token was not accepted: ${joseReason(err)}.`);
    }
    if (nonce !== null && claims.nonce !== nonce) throw new SignInRefused('The ID token does not belong to this sign-in (nonce).');
    return { idToken, claims, refreshToken: tokens.refresh_token ?? oldRefresh, expiresAt: (claims.exp as number) * 1000 };
  }

  /**
   * A back-channel logout token checked: signed by the provider's published keys (asymmetric only), issued by it
   * for this client, recently (iat at most 10 minutes old, not in the future); then its claims (logout-token.ts).
   */
  async logoutMark(token: string): Promise<LogoutMark> {
    await this.configuration();
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, this.jwks as NonNullable<typeof this.jwks>, {
        issuer: this.issuerId(),
        audience: this.settings.clientId,
        algorithms: ASYMMETRIC,
        requiredClaims: ['iat', 'jti', 'events'],
        maxTokenAge: '10m',
        clockTolerance: 60,
      }));
    } catch (err) {
      throw new LogoutRefused(`The logout token was not accepted: ${joseReason(err)}.`);
    }
    if (typeof claims.iat === 'number' && claims.iat * 1000 > Date.now() + 60_000) throw new LogoutRefused('The logout token was issued in the future.');
    return logoutMarkOf(claims);
  }

  private issuerId(): string {
    return this.config?.serverMetadata().issuer ?? this.settings.issuer.href;
  }

  /** The provider's end-session URL for this person (RP-initiated logout), or null when it has none. */
  async endSessionUrl(idToken: string | undefined, postLogoutRedirectUri: string): Promise<string | null> {
    const config = await this.configuration().catch(() => null);
    if (!config?.serverMetadata().end_session_endpoint) return null;
    const params: Record<string, string> = { client_id: this.settings.clientId, post_logout_redirect_uri: postLogoutRedirectUri };
    if (idToken) params.id_token_hint = idToken;
    return client.buildEndSessionUrl(config, params).href;
  }
}

function joseReason(err: unknown): string {
  const code = (err as { code?: string }).code ?? '';
  const claim = (err as { claim?: string }).claim;
  if (code === 'ERR_JWT_EXPIRED' && claim === 'iat') return 'it is too old';
  if (code === 'ERR_JWT_EXPIRED') return 'it has expired';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'iss') return 'it was issued by another provider';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'aud') return 'it was issued for another client';
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED' || code === 'ERR_JOSE_NOT_SUPPORTED') return 'its signature algorithm is not allowed';
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' || code === 'ERR_JWKS_NO_MATCHING_KEY') return 'its signature does not verify';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'iat') return 'its issue time (iat) is not acceptable';
  return 'it is not a valid token';
}

/** openid-client's error in words: what was wrong, never a token (its errors wrap oauth4webapi's, which say more). */
export function refusalMessage(err: unknown): string {
  if (err instanceof client.AuthorizationResponseError || err instanceof client.ResponseBodyError) {
    return `The identity provider refused the sign-in (${err.error}).`;
  }
  const chain: Array<{ code?: string; message?: string; claim?: string; attribute?: string }> = [];
  for (let e: unknown = err, i = 0; e && typeof e === 'object' && i < 4; e = (e as { cause?: unknown }).cause, i++) chain.push(e as (typeof chain)[number]);
  const codes = new Set(chain.map((e) => e.code));
  const messages = chain.map((e) => e.message ?? '').join(' | ');
  const what = chain.map((e) => e.claim ?? e.attribute).find(Boolean);
  if (/"state"/.test(messages)) return 'The answer does not belong to the sign-in you started (state).';
  if (codes.has('OAUTH_JWT_TIMESTAMP_CHECK_FAILED')) return 'The ID token was not accepted: it has expired.';
  if (what === 'iss' || /"iss"/.test(messages)) return 'The ID token was not accepted: it was issued by another provider.';
  if (what === 'aud' || /"aud"/.test(messages)) return 'The ID token was not accepted: it was issued for another client.';
  if (what === 'nonce' || /"nonce"/.test(messages)) return 'The ID token does not belong to this sign-in (nonce).';
  if (/alg|signature/i.test(messages)) return 'The ID token was not accepted: its signature algorithm or signature is not valid.';
  return 'The identity provider answered with a token the console cannot accept.';
}
