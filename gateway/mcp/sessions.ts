// The sessions of /mcp and /mcp/<server>: sealed in the Mcp-Session-Id (session-id.ts), so any replica opens them.
import { SessionSealer, type McpSession } from './session-id.ts';

export class McpSessions {
  private readonly sealer: SessionSealer;

  constructor(pepper: string) {
    this.sealer = new SessionSealer(pepper);
  }

  /** A new session's id, sealed for the caller's key. */
  async start(session: McpSession, keyHash: string): Promise<string> {
    return this.sealer.seal(session, keyHash);
  }

  /** The session of an id, as a request of it uses it; null: unknown, altered or another key's. */
  async use(id: string, keyHash: string): Promise<McpSession | null> {
    return this.sealer.open(id, keyHash);
  }

  /** DELETE: the session ends. */
  async end(_id: string): Promise<void> {}
}
