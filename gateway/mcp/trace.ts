// What the MCP gateway tells tracing about one MCP request (gateway/tracing/mcp-trace.ts makes the spans; present
// only while tracing is on). No OpenTelemetry here: the routes start a trace, the gateway's upstream requests are
// attempts under it, and the answer ends it (a stream's once its last event has gone).
import type { McpAnswer } from './answer.ts';
import type { ClientMessage } from './jsonrpc.ts';

export interface McpRequestInfo {
  /** The HTTP request's headers (W3C traceparent, when params._meta carries none). */
  headers: Record<string, string | string[] | undefined>;
  /** The message of a POST (GET streams and DELETE carry none: they are the transport's, not MCP messages). */
  message: ClientMessage;
  /** The McpServer of /mcp/<server>; null on /mcp. */
  server: string | null;
  /** The client's Mcp-Session-Id (traced as a digest, never as sent). */
  sessionId: string | null;
  protocolVersion: string | null;
  /** HTTP version of the request ("1.1", "2"). */
  httpVersion: string;
  account: string;
  /** The key's name (never the key). */
  apiKeyName: string;
}

export interface McpTrace {
  /** Ends the trace with the answer; a stream's answer is returned wrapped, ending the trace with its last event. */
  end(answer: McpAnswer): McpAnswer;
}

export interface McpTracer {
  start(info: McpRequestInfo): McpTrace;
}
