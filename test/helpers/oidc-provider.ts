// A real OpenID provider in the test process: `oidc-provider` (an OpenID Certified implementation) on loopback, with
// its own login and consent pages (its development interactions: any password, the login names the account), users
// in groups, one confidential client (client_secret_basic, PKCE required), refresh tokens, RP-initiated logout and
// back-channel logout (its logout tokens posted to the console's backchannel_logout_uri, with sid).
// The port is taken before the provider exists, so the console can be started with the issuer URL first and the
// client registered with the console's redirect URI once it is known.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import Provider from 'oidc-provider';
import { importJWK, SignJWT, type JWK } from 'jose';

export interface OidcUser {
  email: string;
  groups: string[];
}

export interface TestOidcProvider {
  /** The issuer URL (http://localhost:PORT: another site than a console on 127.0.0.1, as a real provider is). */
  issuer: string;
  users: Map<string, OidcUser>;
  /** ID tokens' lifetime in seconds (default 3600), for the next tokens issued. */
  idTokenTtlSec: number;
  /** Registers the console as the client (its redirect and post-logout URIs under `consoleUrl`); secret '': public. */
  register(consoleUrl: string, client: { id: string; secret: string }): void;
  /**
   * The provider's next redirect to the console's callback is not delivered: the browser gets a plain page instead,
   * and the promise the URL (code and state), for a test to forge or replay.
   */
  holdNextCallback(): Promise<string>;
  /** Back-channel logouts the provider delivered (the console answered 200) or failed to, in order. */
  backchannel: Array<{ ok: boolean; error?: string }>;
  /** Signs a JWT with the provider's own key (kid test-rs256), for a test to forge tokens the provider never made. */
  sign(payload: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  /** Requests seen by the provider (path and method), to check what the console asked. */
  requests: Array<{ method: string; path: string }>;
  stop(): Promise<void>;
}

export async function startOidcProvider(users: Record<string, OidcUser>): Promise<TestOidcProvider> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const requests: Array<{ method: string; path: string }> = [];
  let hold: ((url: string) => void) | null = null;
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0] as string });
    const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      const location = String(res.getHeader('location') ?? '');
      if (hold && !res.headersSent && res.statusCode >= 300 && res.statusCode < 400 && location.includes('/dashboard/login/oidc/callback?')) {
        hold(location);
        hold = null;
        res.statusCode = 200;
        res.removeHeader('location');
        res.setHeader('content-type', 'text/plain');
        res.removeHeader('content-length');
        return end('held by the test');
      }
      return end(...args);
    }) as typeof res.end;
    if (handler) return handler(req, res);
    res.writeHead(503).end('provider not configured yet');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://localhost:${port}`;
  const map = new Map(Object.entries(users));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-rs256', alg: 'RS256', use: 'sig' };
  const state = { idTokenTtlSec: 3600 };
  const backchannel: TestOidcProvider['backchannel'] = [];
  const out: TestOidcProvider = {
    issuer,
    users: map,
    get idTokenTtlSec() {
      return state.idTokenTtlSec;
    },
    set idTokenTtlSec(v: number) {
      state.idTokenTtlSec = v;
    },
    requests,
    backchannel,
    sign: async (payload, header = {}) =>
      new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: jwk.kid, ...header }).sign(await importJWK(jwk as JWK, 'RS256')),
    holdNextCallback: () => new Promise<string>((resolve) => (hold = resolve)),
    register(consoleUrl, client) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: client.id,
            // No secret: a public client (token_endpoint_auth_method none; PKCE is then all that binds the code).
            ...(client.secret ? { client_secret: client.secret } : {}),
            redirect_uris: [`${consoleUrl}/dashboard/login/oidc/callback`],
            post_logout_redirect_uris: [`${consoleUrl}/dashboard/login`],
            backchannel_logout_uri: `${consoleUrl}/dashboard/login/oidc/backchannel-logout`,
            backchannel_logout_session_required: true,
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: client.secret ? 'client_secret_basic' : 'none',
          },
        ],
        jwks: { keys: [jwk] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
        // Groups and email in the ID token itself (not only from userinfo), as the console reads them there.
        conformIdTokenClaims: false,
        pkce: { required: () => true },
        // Its outgoing requests (the logout tokens) refuse loopback addresses against SSRF; the console is on loopback
        // here, so the test's provider sends them without that check (the provider's own documented fetch option).
        fetch: (url: string, options: RequestInit & { dispatcher?: unknown }) => globalThis.fetch(url, { ...options, dispatcher: undefined } as RequestInit),
        features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true }, backchannelLogout: { enabled: true } },
        // A refresh token with every code grant (a real provider may need offline_access and consent for it).
        issueRefreshToken: async (_ctx, c) => c.grantTypeAllowed('refresh_token'),
        ttl: { IdToken: () => state.idTokenTtlSec, AccessToken: 3600, RefreshToken: 3600, Session: 3600, Interaction: 600, Grant: 3600 },
        findAccount: (_ctx, id) => {
          const u = map.get(id);
          if (!u) return undefined;
          return { accountId: id, claims: () => ({ sub: id, email: u.email, email_verified: true, groups: u.groups }) };
        },
      });
      provider.on('backchannel.success', () => backchannel.push({ ok: true }));
      provider.on('backchannel.error', (_ctx: unknown, err: Error) => backchannel.push({ ok: false, error: err.message }));
      handler = provider.callback();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return out;
}
