// Shared HTTP transport of the HTTP providers: undici keep-alive pools, the four timeouts, failure mapping.
import { Readable } from 'node:stream';
import { Agent, errors, request } from 'undici';
import type { CompiledTarget } from '../contract/snapshot.ts';
import { authSecrets } from './scrub.ts';
import { UpstreamFailure, type AudioOutcome, type UpstreamOutcome } from './types.ts';

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
/**
 * Connections a process keeps to one upstream origin at most. A model's stream holds its connection for as long as it
 * lasts (minutes), so this is the number of calls in flight to one provider a process can carry: a low cap (it was
 * 256) made the next call wait, with its client, until a stream ended. The process's open-files limit is the real bound.
 */
export const UPSTREAM_CONNECTIONS = 65_536;

/** Upstream URLs kept parsed at most (a process's targets times their operations); past that the cache starts over. */
const MAX_URLS = 1_000;

export class HttpTransport {
  private readonly agents = new Map<number, Agent>();
  /** Each upstream URL's origin and path, parsed once: undici's `request(url)` parsed the string on every call. */
  private readonly urls = new Map<string, { origin: string; path: string }>();

  private parsed(url: string): { origin: string; path: string } {
    let p = this.urls.get(url);
    if (!p) {
      // The checks undici's `request(url)` makes (an http(s) URL), then its origin and path as it derives them.
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:')
        throw new errors.InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
      p = { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname };
      if (this.urls.size >= MAX_URLS) this.urls.clear();
      this.urls.set(url, p);
    }
    return p;
  }

  /**
   * One pool per connect timeout. An aborted call (its client left, a timeout) destroys its connection and leaves
   * nothing behind: undici 7 opened a fresh connection for the aborted request and kept it idle in the pool (fixed in
   * undici 8.13; test/gateway/upstream-cancel.test.ts counts it at the upstream). HTTP/1.1 only, as before: undici 8
   * would offer h2 to TLS upstreams by default.
   */
  private agent(connectMs: number): Agent {
    let a = this.agents.get(connectMs);
    if (!a) {
      a = new Agent({ connect: { timeout: connectMs }, keepAliveTimeout: 30_000, connections: UPSTREAM_CONNECTIONS, pipelining: 1, allowH2: false });
      this.agents.set(connectMs, a);
    }
    return a;
  }

  async send(opts: {
    target: CompiledTarget;
    url: string;
    headers: Record<string, string>;
    /** A body in memory, or streamed (a multipart form whose files may be read from disk as they are sent). */
    body: string | Uint8Array | AsyncIterable<Uint8Array>;
    stream: boolean;
    signal: AbortSignal;
    /** Sees the answer's headers (a provider whose errors or usage travel in headers: Bedrock). */
    onHeaders?: (headers: Record<string, string | string[] | undefined>) => void;
  }): Promise<UpstreamOutcome> {
    const { target } = opts;
    try {
      // The agent's own request (what undici's `request(url, { dispatcher })` calls), with the URL parsed once.
      const { origin, path } = this.parsed(opts.url);
      const res = await this.agent(target.timeouts.connectMs).request({
        origin,
        path,
        method: 'POST',
        headers: opts.headers,
        body: typeof opts.body === 'string' || opts.body instanceof Uint8Array ? opts.body : Readable.from(opts.body, { objectMode: false }),
        signal: opts.signal,
        headersTimeout: target.timeouts.firstByteMs,
        bodyTimeout: target.timeouts.idleMs,
      });
      opts.onHeaders?.(res.headers);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const body = await res.body.text().catch(() => '');
        const ra = res.headers['retry-after'];
        return { kind: 'error', status: res.statusCode, body, retryAfter: Array.isArray(ra) ? ra[0] : ra, sent: () => authSecrets(opts.headers) };
      }
      if (opts.stream) return { kind: 'stream', status: res.statusCode, body: res.body, sent: () => authSecrets(opts.headers) };
      return { kind: 'json', status: res.statusCode, body: await res.body.text() };
    } catch (err) {
      throw toFailure(err, opts.signal);
    }
  }

  /** A request whose body may stream (an upload) and whose answer is passed on as bytes, whatever its type. */
  async sendBytes(opts: {
    target: CompiledTarget;
    url: string;
    headers: Record<string, string>;
    body: AsyncIterable<Uint8Array> | string;
    signal: AbortSignal;
  }): Promise<AudioOutcome> {
    const { target } = opts;
    try {
      const res = await request(opts.url, {
        method: 'POST',
        headers: opts.headers,
        body: typeof opts.body === 'string' ? opts.body : Readable.from(opts.body, { objectMode: false }),
        signal: opts.signal,
        dispatcher: this.agent(target.timeouts.connectMs),
        headersTimeout: target.timeouts.firstByteMs,
        bodyTimeout: target.timeouts.idleMs,
      });
      const sent = (): string[] => authSecrets(opts.headers);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const body = await res.body.text().catch(() => '');
        const ra = res.headers['retry-after'];
        return { kind: 'error', status: res.statusCode, body, retryAfter: Array.isArray(ra) ? ra[0] : ra, sent };
      }
      const ct = res.headers['content-type'];
      return { kind: 'answer', status: res.statusCode, contentType: (Array.isArray(ct) ? ct[0] : ct) ?? 'application/octet-stream', body: res.body };
    } catch (err) {
      throw toFailure(err, opts.signal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
    this.agents.clear();
  }
}

/** Maps a transport error to the fallback reason it stands for; aborts by the caller are rethrown as they are. */
export function toFailure(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason ?? err;
  const code = (err as { code?: string }).code ?? '';
  if (TIMEOUT_CODES.has(code)) return new UpstreamFailure('timeout', `upstream timed out (${code})`);
  if (err instanceof errors.UndiciError || /^E[A-Z]+$/.test(code)) {
    return new UpstreamFailure('connect_error', `upstream connection failed (${code || 'error'})`);
  }
  return err;
}
