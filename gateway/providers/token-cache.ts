// One access token kept for every call: fetched once, refreshed before it expires (in the background while the
// current one is still good), never per call; concurrent callers share one fetch in flight. After a failed fetch with
// no token to serve, the clouds' common back-off (credential-backoff.ts) holds: calls get the same failure without
// asking the token issuer again. A failed background refresh is tried again after BACKGROUND_RETRY_MS while the token
// serves. Used for Azure Entra ID (azure-openai/auth.ts) and the OAuth client-credentials grant of MCP upstreams.
import { CredentialBackoff } from './credential-backoff.ts';

export interface AccessTokenLike {
  token: string;
  /** When the token expires (ms). */
  expiresOnTimestamp: number;
  /** When the issuer suggests refreshing it (ms), if it says. */
  refreshAfterTimestamp?: number;
}

interface Held {
  token: string;
  /** From here on, a call starts a background refresh and still uses this token. */
  refreshAt: number;
  /** From here on, the token is too close to its expiry to be sent: a call waits for a new one. */
  usableUntil: number;
}

/** After a failed background refresh, calls keep the current token this long before one tries again. */
const BACKGROUND_RETRY_MS = 5_000;
/** A fetch still unanswered after this is given up, so a stalled token endpoint cannot hold every later call. */
const FETCH_TIMEOUT_MS = 30_000;

export class TokenCache {
  private held: Held | null = null;
  private inflight: Promise<string> | null = null;
  private readonly backoff = new CredentialBackoff<Error>();
  private retryAt = 0;
  private readonly fetchToken: () => Promise<AccessTokenLike>;
  private readonly now: () => number;
  private readonly fetchTimeoutMs: number;

  constructor(fetchToken: () => Promise<AccessTokenLike>, now: () => number = Date.now, fetchTimeoutMs = FETCH_TIMEOUT_MS) {
    this.fetchToken = fetchToken;
    this.now = now;
    this.fetchTimeoutMs = fetchTimeoutMs;
  }

  get(): Promise<string> {
    const t = this.now();
    const held = this.held;
    if (held && t < held.usableUntil) {
      if (t >= held.refreshAt && t >= this.retryAt && !this.inflight) {
        this.refresh(false).catch(() => {
          this.retryAt = this.now() + BACKGROUND_RETRY_MS;
        });
      }
      return Promise.resolve(held.token);
    }
    if (this.inflight) return this.inflight;
    const failure = this.backoff.held(t);
    return failure ? Promise.reject(failure) : this.refresh(true);
  }

  /**
   * Drops `token` if it is the one held (its resource refused it): the next call fetches anew. A token replaced
   * meanwhile is kept, so many calls refused with the same old token drop it once.
   */
  invalidate(token: string): void {
    if (this.held?.token === token) this.held = null;
  }

  /** `foreground`: no token to serve meanwhile, so a failure starts (or extends) the back-off. */
  private refresh(foreground: boolean): Promise<string> {
    const p = (async (): Promise<string> => {
      const obtained = this.now();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no token within ${this.fetchTimeoutMs} ms`)), this.fetchTimeoutMs);
        timer.unref();
      });
      let at: AccessTokenLike;
      try {
        at = await Promise.race([this.fetchToken(), deadline]).finally(() => clearTimeout(timer));
      } catch (err) {
        if (foreground) this.backoff.failed(err instanceof Error ? err : new Error(String(err)), this.now());
        throw err;
      }
      this.backoff.succeeded();
      const life = Math.max(0, at.expiresOnTimestamp - obtained);
      this.held = {
        token: at.token,
        refreshAt: at.refreshAfterTimestamp ?? at.expiresOnTimestamp - Math.min(5 * 60_000, life / 2),
        usableUntil: at.expiresOnTimestamp - Math.min(30_000, life / 10),
      };
      return at.token;
    })();
    this.inflight = p;
    void p
      .finally(() => {
        if (this.inflight === p) this.inflight = null;
      })
      .catch(() => undefined);
    return p;
  }
}
