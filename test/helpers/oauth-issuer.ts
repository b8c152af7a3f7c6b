// A fake OAuth authorization server's token endpoint on loopback, speaking the real wire format of the
// client-credentials grant (RFC 6749 4.4 and 5): a form POST, the client authenticated with HTTP Basic
// (client_secret_basic, id and secret form-encoded first as appendix B says), a JSON answer with access_token,
// token_type and expires_in, or a 400/401 JSON error. It issues random short-lived tokens and says which are valid,
// so an upstream can check them; it records every request for the test.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface IssuerClient {
  secret: string;
  /** expires_in of its tokens, in seconds. */
  expiresIn: number;
}

export interface TokenRequest {
  /** When it arrived (ms). */
  at: number;
  clientId: string | null;
  /** The form fields as sent. */
  form: Record<string, string>;
  contentType: string;
  /** The status answered. */
  status: number;
}

export interface Issued {
  token: string;
  clientId: string;
  expiresAt: number;
  revoked: boolean;
}

export interface Issuer {
  tokenUrl: string;
  requests: TokenRequest[];
  issued: Issued[];
  /** Requests by a client (by the id in its Basic credentials). */
  requestsOf(clientId: string): TokenRequest[];
  /** Is this a token issued here, not expired and not revoked? */
  valid(token: string): boolean;
  /** Revokes every token of a client issued so far. */
  revoke(clientId: string): void;
  close(): Promise<void>;
}

const formDecode = (s: string): string => decodeURIComponent(s.replace(/\+/g, ' '));

export async function startIssuer(clients: Record<string, IssuerClient>): Promise<Issuer> {
  const requests: TokenRequest[] = [];
  const issued: Issued[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const contentType = String(req.headers['content-type'] ?? '');
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const answer = (status: number, body: object, headers: Record<string, string> = {}): void => {
        requests.push({ at, clientId, form, contentType, status });
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
      };
      let clientId: string | null = null;
      let secret: string | null = null;
      const auth = String(req.headers.authorization ?? '');
      if (auth.startsWith('Basic ')) {
        const plain = Buffer.from(auth.slice(6), 'base64').toString('utf8');
        const i = plain.indexOf(':');
        if (i > 0) {
          clientId = formDecode(plain.slice(0, i));
          secret = formDecode(plain.slice(i + 1));
        }
      }
      if (req.method !== 'POST' || req.url !== '/token') return answer(404, { error: 'not_found' });
      if (!contentType.startsWith('application/x-www-form-urlencoded')) return answer(400, { error: 'invalid_request' });
      const client = clientId === null ? undefined : clients[clientId];
      if (!client || client.secret !== secret) return answer(401, { error: 'invalid_client' }, { 'www-authenticate': 'Basic realm="token"' });
      if (form.grant_type !== 'client_credentials') return answer(400, { error: 'unsupported_grant_type' });
      const token = `issued-${randomBytes(16).toString('hex')}`;
      issued.push({ token, clientId: clientId as string, expiresAt: at + client.expiresIn * 1000, revoked: false });
      answer(200, { access_token: token, token_type: 'Bearer', expires_in: client.expiresIn, ...(form.scope ? { scope: form.scope } : {}) });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    tokenUrl: `http://127.0.0.1:${port}/token`,
    requests,
    issued,
    requestsOf: (id) => requests.filter((r) => r.clientId === id),
    valid: (token) => issued.some((t) => t.token === token && !t.revoked && Date.now() < t.expiresAt),
    revoke: (id) => {
      for (const t of issued) if (t.clientId === id) t.revoked = true;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
