// What an MCP request gets back, with no HTTP framework in it: gateway/http/mcp-routes.ts writes it.
export type McpAnswer =
  /** One JSON-RPC message (or a JSON-RPC error with an HTTP status of its own). */
  | { kind: 'json'; status: number; body: unknown; sessionId?: string; retryAfterSec?: number }
  /** A notification or a response taken: 202, no body. */
  | { kind: 'accepted'; sessionId?: string }
  /** An SSE stream, event by event (each a whole event, blank line included); `done` runs once it ends, however. */
  | { kind: 'stream'; events: AsyncIterable<string>; sessionId?: string }
  /** A bare status (DELETE's 200, a GET stream this endpoint does not offer: 405). */
  | { kind: 'status'; status: number; allow?: string };
