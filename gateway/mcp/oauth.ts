// The OAuth client-credentials grant (RFC 6749 section 4.4) of an McpServer with spec.oauth: the gateway asks the
// token endpoint for an access token (a form POST, the client authenticated with HTTP Basic as client_secret_basic,
// the scopes space-joined, the resource indicator of RFC 8707 as MCP's authorization spec asks, an audience where the
// authorization server wants one) and sends it upstream as `Authorization: Bearer`. One token per server and
// configuration is kept by the shared TokenCache: fetched once, refreshed before it expires, one fetch in flight for
// concurrent calls, the clouds' back-off after a failure. The secret and the tokens go nowhere else: not in an error
// message (which names only the endpoint's status and its OAuth error code), a log line or the snapshot in clear.
import { createHash } from 'node:crypto';
import { request } from 'undici';
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { TokenCache, type AccessTokenLike } from '../providers/token-cache.ts';

type OAuth = NonNullable<CompiledMcpServer['oauth']>;

/** A token could not be obtained; the message holds no secret and no token. */
export class OAuthFailed extends Error {}

/** When the token endpoint gives no expires_in (RFC 6749 makes it optional): kept this long, dropped on a 401. */
const DEFAULT_LIFETIME_S = 3600;
/** A token answer larger than this is refused (a token endpoint answers a small JSON object). */
const MAX_ANSWER_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 30_000;
/** Caches kept (one per server and configuration): bounded, so configuration changes cannot grow it. */
const MAX_CACHES = 256;

/** application/x-www-form-urlencoded, as RFC 6749 appendix B asks for the client id and secret before Basic. */
const formEncode = (s: string): string => new URLSearchParams({ v: s }).toString().slice(2);

/** An OAuth error code is printable ASCII without quote or backslash (RFC 6749 5.2); anything else is not repeated. */
const errorCode = (v: unknown): string | null => (typeof v === 'string' && /^[\x20-\x21\x23-\x5B\x5D-\x7E]{1,64}$/.test(v) ? v : null);

async function fetchToken(o: OAuth, secret: string): Promise<AccessTokenLike> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (o.scopes.length > 0) form.set('scope', o.scopes.join(' '));
  if (o.resource !== null) form.set('resource', o.resource);
  if (o.audience !== null) form.set('audience', o.audience);
  const started = Date.now();
  let res;
  try {
    res = await request(o.tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${formEncode(o.clientId)}:${formEncode(secret)}`).toString('base64')}`,
      },
      body: form.toString(),
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
    });
  } catch (err) {
    const code = (err as { code?: string }).code ?? 'error';
    throw new OAuthFailed(`the token endpoint could not be reached (${code})`);
  }
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body) {
    const b = Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array);
    n += b.length;
    if (n > MAX_ANSWER_BYTES) {
      res.body.on('error', () => undefined).destroy();
      throw new OAuthFailed('the token endpoint answered too much');
    }
    chunks.push(b);
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: named as such below.
  }
  if (res.statusCode !== 200) {
    const code = errorCode(body.error);
    throw new OAuthFailed(`the token endpoint answered ${res.statusCode}${code ? ` ${code}` : ''}`);
  }
  const token = body.access_token;
  if (typeof token !== 'string' || token === '') throw new OAuthFailed('the token endpoint answered no access_token');
  if (typeof body.token_type !== 'string' || body.token_type.toLowerCase() !== 'bearer') throw new OAuthFailed('the token endpoint answered no Bearer token');
  const life = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_S;
  return { token, expiresOnTimestamp: started + life * 1000 };
}

const caches = new Map<string, TokenCache>();

function cacheOf(server: CompiledMcpServer, o: OAuth): TokenCache {
  const secret = o.clientSecret.kind === 'value' ? o.clientSecret.value : '';
  // By server and everything that makes its token: a rotated secret or new scopes get a new token at once.
  const id = createHash('sha256')
    .update(JSON.stringify([server.name, o.tokenUrl, o.clientId, secret, o.scopes, o.audience, o.resource]))
    .digest('base64url');
  let c = caches.get(id);
  if (!c) {
    if (caches.size >= MAX_CACHES) caches.delete(caches.keys().next().value as string);
    c = new TokenCache(() => fetchToken(o, secret));
    caches.set(id, c);
  }
  return c;
}

/** The access token to send to `server`'s upstream; null when it has no spec.oauth. Throws OAuthFailed. */
export async function upstreamToken(server: CompiledMcpServer): Promise<string | null> {
  if (!server.oauth) return null;
  try {
    return await cacheOf(server, server.oauth).get();
  } catch (err) {
    throw err instanceof OAuthFailed ? err : new OAuthFailed('the token endpoint did not answer');
  }
}

/** The upstream answered 401 with `token`: dropped once, so the next call fetches a new one. */
export function tokenRefused(server: CompiledMcpServer, token: string): void {
  if (server.oauth) cacheOf(server, server.oauth).invalidate(token);
}
