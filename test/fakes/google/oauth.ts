// A fake of Google's OAuth 2.0 token endpoint for service-account keys, where google-auth-library sends it.
// The library posts the JWT-bearer grant to https://oauth2.googleapis.com/token, a URL it does not take from the
// key's token_uri (gtoken has it fixed), so the fake is reached the way a pod behind an egress proxy reaches Google:
// HTTPS_PROXY names a CONNECT proxy on 127.0.0.1 that tunnels oauth2.googleapis.com:443 (only that host) to a TLS
// server on 127.0.0.1 whose certificate for oauth2.googleapis.com a throwaway CA signed (NODE_EXTRA_CA_CERTS in the
// gateway's environment). The endpoint verifies the assertion as Google does: RS256 signature checked with the
// public key of the service account's key pair (made in the test with node:crypto), iss, aud, scope, iat/exp; then
// it issues a short-lived access token.
import { execFile } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const TOKEN_HOST = 'oauth2.googleapis.com:443';

export interface ServiceAccount {
  /** The key file's JSON, as a user puts it into a Secret. */
  json: string;
  email: string;
  publicKey: KeyObject;
}

/** A service-account key file with a fresh RSA key pair. */
export function makeServiceAccount(project: string, name = 'svc-gateway'): ServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = `${name}@${project}.iam.gserviceaccount.com`;
  const json = JSON.stringify({
    type: 'service_account',
    project_id: project,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: email,
    client_id: '100000000000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: GOOGLE_TOKEN_URL,
    universe_domain: 'googleapis.com',
  });
  return { json, email, publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })) };
}

export interface FakeOAuth {
  /** HTTPS_PROXY for the gateway. */
  proxyUrl: string;
  /** NODE_EXTRA_CA_CERTS for the gateway. */
  caFile: string;
  /** Grants answered with a token. */
  grants: number;
  /** Grants refused (bad signature, unknown account, wrong audience, expired assertion), with Google's error. */
  refusals: string[];
  /** CONNECTs to any other host (refused): the gateway must not reach anything else through the proxy. */
  otherHosts: string[];
  expiresIn: number;
  valid(token: string): boolean;
  issued: string[];
  close(): Promise<void>;
}

async function certificate(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const o = (args: string[]): Promise<unknown> =>
    run('openssl', args, { cwd: dir, timeout: 30_000 }).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new Error('openssl is needed for the service-account key tests (Debian/Ubuntu: `apt-get install openssl`).');
      throw err;
    });
  await o(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=svc-test-google-ca', '-keyout', 'ca.key', '-out', 'ca.crt']);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=DNS:oauth2.googleapis.com\nextendedKeyUsage=serverAuth\n');
  await o(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=oauth2.googleapis.com', '-keyout', 'server.key', '-out', 'server.csr']);
  await o([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'server.ext',
    '-out',
    'server.crt',
  ]);
  return { ca: join(dir, 'ca.crt'), cert: readFileSync(join(dir, 'server.crt'), 'utf8'), key: readFileSync(join(dir, 'server.key'), 'utf8') };
}

const b64json = (s: string): Record<string, unknown> => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;

export async function startFakeOAuth(accounts: ServiceAccount[], expiresIn = 3600): Promise<FakeOAuth> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-google-oauth-'));
  const { ca, cert, key } = await certificate(dir);
  const expiry = new Map<string, number>();
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };

  const refuse = (res: import('node:http').ServerResponse, error: string, description: string): void => {
    fake.refusals.push(`${error}: ${description}`);
    res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error, error_description: description }));
  };

  const tls = createHttpsServer({ cert, key }, (req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/token') return void res.writeHead(404).end();
      const form = new URLSearchParams(raw);
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse(res, 'unsupported_grant_type', 'Invalid grant_type');
      const [h = '', p = '', sig = ''] = (form.get('assertion') ?? '').split('.');
      let header: Record<string, unknown>;
      let claims: Record<string, unknown>;
      try {
        header = b64json(h);
        claims = b64json(p);
      } catch {
        return refuse(res, 'invalid_grant', 'Invalid JWT: malformed');
      }
      const account = accounts.find((a) => a.email === claims.iss);
      if (!account) return refuse(res, 'invalid_grant', 'Invalid grant: account not found');
      const signed = header.alg === 'RS256' && verify('RSA-SHA256', Buffer.from(`${h}.${p}`), account.publicKey, Buffer.from(sig, 'base64url'));
      if (!signed) return refuse(res, 'invalid_grant', 'Invalid JWT Signature.');
      const now = Math.floor(Date.now() / 1000);
      if (claims.aud !== GOOGLE_TOKEN_URL)
        return refuse(res, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe (aud)');
      if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number' || claims.exp < now || claims.exp - claims.iat > 3600)
        return refuse(res, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
      if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes('https://www.googleapis.com/auth/cloud-platform'))
        return refuse(res, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
      fake.grants++;
      const token = `ya29.c.fake-sa-${randomBytes(12).toString('hex')}`;
      expiry.set(token, Date.now() + fake.expiresIn * 1000);
      fake.issued.push(token);
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify({ access_token: token, expires_in: fake.expiresIn, token_type: 'Bearer' }));
    });
  });
  tls.on('connection', track);
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', () => r()));
  const tlsPort = (tls.address() as AddressInfo).port;

  const proxy = createHttpServer((_req, res) => res.writeHead(405).end());
  proxy.on('connection', track);
  proxy.on('connect', (req, client: Socket, head: Buffer) => {
    if (req.url !== TOKEN_HOST) {
      fake.otherHosts.push(String(req.url));
      return void client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    }
    const upstream = connect(tlsPort, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));

  const fake: FakeOAuth = {
    proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    caFile: ca,
    grants: 0,
    refusals: [],
    otherHosts: [],
    expiresIn,
    issued: [],
    valid: (token) => (expiry.get(token) ?? 0) > Date.now(),
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => tls.close(() => r())), new Promise<void>((r) => proxy.close(() => r()))]);
    },
  };
  return fake;
}
