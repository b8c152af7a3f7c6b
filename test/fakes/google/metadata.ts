// A fake GCE/GKE metadata server on 127.0.0.1 (GCE_METADATA_HOST=host:port), as google-auth-library's Application
// Default Credentials probe and read it: every answer needs and carries `Metadata-Flavor: Google`; `/computeMetadata/
// v1/instance` answers the "am I on GCE?" probe, `project/project-id` and `universe/universe-domain` the lookups, and
// `instance/service-accounts/default/token` issues short-lived access tokens (expires_in seconds, remembered with their
// expiry so the fake Vertex refuses them once expired). `failing` makes the token path answer 500 (a credential that
// cannot be obtained).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeMetadata {
  /** host:port, as GCE_METADATA_HOST takes it. */
  host: string;
  /** Token requests answered (200 or not). */
  tokenFetches: number;
  /** The scopes asked for, per token request. */
  scopes: string[];
  /** Lifetime of the next tokens, seconds. */
  expiresIn: number;
  failing: boolean;
  /** Token requests are held unanswered (a metadata server that hangs). */
  stalling: boolean;
  /** True for a token this server issued that has not expired. */
  valid(token: string): boolean;
  /** When a token was issued (ms), or undefined. */
  issuedAt(token: string): number | undefined;
  /** Every token issued, in order. */
  issued: string[];
  close(): Promise<void>;
}

export const FAKE_METADATA_PROJECT = 'fake-gke-project';

export async function startFakeMetadata(expiresIn = 3600): Promise<FakeMetadata> {
  const expiry = new Map<string, number>();
  const issued = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://metadata');
    const send = (status: number, body: string, type = 'application/text'): void => {
      res.writeHead(status, { 'metadata-flavor': 'Google', 'content-type': type }).end(body);
    };
    if (req.headers['metadata-flavor'] !== 'Google') return send(403, 'Missing Metadata-Flavor:Google header.');
    switch (url.pathname) {
      case '/computeMetadata/v1/instance':
      case '/computeMetadata/v1/instance/':
        return send(200, 'attributes/\nhostname\nid\nservice-accounts/\nzone\n');
      case '/computeMetadata/v1/project/project-id':
        return send(200, FAKE_METADATA_PROJECT);
      case '/computeMetadata/v1/universe/universe-domain':
        return send(200, 'googleapis.com');
      case '/computeMetadata/v1/instance/service-accounts/default/token': {
        fake.tokenFetches++;
        fake.scopes.push(url.searchParams.get('scopes') ?? '');
        if (fake.failing) return send(500, 'metadata server: token unavailable');
        if (fake.stalling) return;
        const token = `ya29.fake-gke-${randomBytes(12).toString('hex')}`;
        issued.set(token, Date.now());
        expiry.set(token, Date.now() + fake.expiresIn * 1000);
        fake.issued.push(token);
        return send(200, JSON.stringify({ access_token: token, expires_in: fake.expiresIn, token_type: 'Bearer' }), 'application/json');
      }
      default:
        return send(404, 'Not Found');
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  const fake: FakeMetadata = {
    host: `127.0.0.1:${port}`,
    tokenFetches: 0,
    scopes: [],
    expiresIn,
    failing: false,
    stalling: false,
    issued: [],
    valid: (token) => (expiry.get(token) ?? 0) > Date.now(),
    issuedAt: (token) => issued.get(token),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return fake;
}
