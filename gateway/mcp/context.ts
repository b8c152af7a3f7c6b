// What an MCP request's handler gets: the pipeline's deps, the caller (authenticated; its principal), the
// sessions, the client's signal and the MCP headers it sent. No HTTP framework.
import type { Snapshot } from '../contract/snapshot.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import type { Principal } from '../pipeline/resolve.ts';
import type { McpSessions } from './sessions.ts';

export interface McpHeaders {
  sessionId: string | null;
  protocolVersion: string | null;
  lastEventId: string | null;
}

export interface McpContext {
  deps: GatewayDeps;
  sessions: McpSessions;
  snapshot: Snapshot;
  p: Principal;
  /** The caller's key HMAC: the session ids it may open are sealed to it. */
  keyHash: string;
  /** Aborted when the client leaves: the upstream request is aborted with it. */
  signal: AbortSignal;
  headers: McpHeaders;
}
