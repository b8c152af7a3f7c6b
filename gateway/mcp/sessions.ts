// The sessions of /mcp and /mcp/<server>: sealed in the Mcp-Session-Id (session-id.ts), so any replica opens them,
// and recorded in the store by a random id of their own for the idle TTL: each request marks the session used; a
// session idle past the TTL is refused (404, as MCP says of an unknown session) and a sweep, run by every replica,
// claims it (each session once across them) and ends its upstream sessions (DELETE).
import { randomBytes } from 'node:crypto';
import type { McpSessionStore } from '../state/mcp-sessions.ts';
import { SessionSealer, type McpSession } from './session-id.ts';

/** Sessions claimed per round of the sweep (rounds follow until fewer come). */
const CLAIM_MAX = 100;

export interface SweepHooks {
  /** Ends the upstream sessions of a session claimed as idle. */
  close(session: McpSession): Promise<void>;
  warn(message: string, err: unknown): void;
}

export class McpSessions {
  private readonly sealer: SessionSealer;
  private readonly store: McpSessionStore | undefined;
  private readonly idleMs: number;
  private readonly now: () => number;

  constructor(pepper: string, store: McpSessionStore | undefined, idleMs: number, now: () => number = Date.now) {
    this.sealer = new SessionSealer(pepper);
    this.store = idleMs > 0 ? store : undefined;
    this.idleMs = idleMs;
    this.now = now;
  }

  /** A new session's id, sealed for the caller's key (and recorded, with an idle TTL). */
  async start(session: McpSession, keyHash: string): Promise<string> {
    if (!this.store) return this.sealer.seal(session, keyHash);
    const sid = randomBytes(16).toString('base64url');
    const sealed = this.sealer.seal({ ...session, sid }, keyHash);
    await this.store.start(sid, { sealed, keyHash }, this.now());
    return sealed;
  }

  /** The session of an id, as a request of it uses it; null: unknown, altered, another key's, ended or idle. */
  async use(id: string, keyHash: string): Promise<McpSession | null> {
    const s = this.sealer.open(id, keyHash);
    if (!s || s.sid === undefined || !this.store) return s;
    const now = this.now();
    return (await this.store.touch(s.sid, now, now - this.idleMs)) ? s : null;
  }

  /** DELETE: the session ends (its id is refused from now on). */
  async end(id: string, keyHash: string): Promise<void> {
    const sid = this.sealer.open(id, keyHash)?.sid;
    if (sid !== undefined && this.store) await this.store.end(sid);
  }

  /** Ends idle sessions every quarter of the TTL (at most every 30 s); the returned function stops it. */
  sweep(hooks: SweepHooks): () => void {
    const store = this.store;
    if (!store) return () => {};
    let running = false;
    const round = async (): Promise<void> => {
      for (;;) {
        const claimed = await store.claimIdle(this.now() - this.idleMs, CLAIM_MAX);
        await Promise.all(
          claimed.map(async (c) => {
            const s = this.sealer.open(c.sealed, c.keyHash);
            if (s) await hooks.close(s).catch((err: unknown) => hooks.warn('Failed to end an idle MCP session upstream', err));
          }),
        );
        if (claimed.length < CLAIM_MAX) return;
      }
    };
    const timer = setInterval(
      () => {
        if (running) return;
        running = true;
        round()
          .catch((err: unknown) => hooks.warn('The MCP idle-session sweep failed; it runs again', err))
          .finally(() => (running = false));
      },
      Math.min(30_000, Math.max(50, Math.floor(this.idleMs / 4))),
    );
    timer.unref();
    return () => clearInterval(timer);
  }
}
