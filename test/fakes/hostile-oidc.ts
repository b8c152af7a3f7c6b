// A hostile OpenID provider on loopback, speaking the real wire format (discovery, JWKS, the authorization endpoint's
// redirect with code and state, the token endpoint with client_secret_basic and a PKCE S256 check), whose ID tokens
// are forged as a test asks: from another issuer, for another client, expired, with a wrong nonce, unsigned
// (`alg: none`), an HMAC keyed with its own public key, or signed by a key it does not publish. `valid` issues a
// correct one, so a test can show the harness signs a person in when nothing is forged.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, type JWTPayload } from 'jose';

export type Forgery = 'valid' | 'other-issuer' | 'other-audience' | 'expired' | 'wrong-nonce' | 'alg-none' | 'hmac-public-key' | 'unpublished-key';

export interface HostileProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** What the next ID tokens are. */
  forgery: Forgery;
  /** Token requests refused for a wrong or missing PKCE verifier. */
  pkceRefusals: number;
  stop(): Promise<void>;
}

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

export async function startHostileProvider(): Promise<HostileProvider> {
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicJwk = { ...key.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' };
  const publicPem = key.publicKey.export({ format: 'pem', type: 'spki' }) as string;
  const codes = new Map<string, { challenge: string; nonce: string; redirectUri: string }>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const p: HostileProvider = {
    issuer,
    clientId: 'svc-console',
    clientSecret: 'hostile-test-secret',
    forgery: 'valid',
    pkceRefusals: 0,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  async function idToken(nonce: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = { sub: 'mallory', email: 'mallory@example.com', groups: ['team-a'], nonce, iat: now, exp: now + 300 };
    const f = p.forgery;
    const payload: JWTPayload = {
      ...claims,
      iss: f === 'other-issuer' ? 'https://evil.example' : issuer,
      aud: f === 'other-audience' ? 'another-client' : p.clientId,
      ...(f === 'wrong-nonce' ? { nonce: 'not-the-nonce' } : {}),
      ...(f === 'expired' ? { iat: now - 7200, exp: now - 3600 } : {}),
    };
    if (f === 'alg-none') return `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`;
    if (f === 'hmac-public-key') return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(new TextEncoder().encode(publicPem));
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(f === 'unpublished-key' ? stranger.privateKey : key.privateKey);
  }

  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
      });
    }
    if (url.pathname === '/jwks') return json(200, { keys: [publicJwk] });
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      const code = randomBytes(16).toString('base64url');
      codes.set(code, { challenge: q.get('code_challenge') ?? '', nonce: q.get('nonce') ?? '', redirectUri: q.get('redirect_uri') ?? '' });
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      if (q.get('state')) back.searchParams.set('state', q.get('state') as string);
      res.writeHead(303, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        void (async () => {
          const form = new URLSearchParams(body);
          // client_secret_basic: id and secret each form-urlencoded, then joined by a colon (RFC 6749 2.3.1).
          const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
          const [id, secret] = basic.split(':').map((x) => decodeURIComponent(x.replace(/\+/g, ' ')));
          if (id !== p.clientId || secret !== p.clientSecret) return json(401, { error: 'invalid_client' });
          const grant = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          if (!grant || grant.redirectUri !== form.get('redirect_uri')) return json(400, { error: 'invalid_grant' });
          const verifier = form.get('code_verifier') ?? '';
          if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) {
            p.pkceRefusals += 1;
            return json(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
          }
          json(200, { access_token: randomBytes(16).toString('base64url'), token_type: 'Bearer', expires_in: 300, id_token: await idToken(grant.nonce) });
        })();
      });
      return;
    }
    json(404, { error: 'not_found' });
  });
  return p;
}
