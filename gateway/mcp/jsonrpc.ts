// The JSON-RPC 2.0 messages MCP carries, as the gateway reads them: one message per POST (batches were removed from
// MCP in 2025-06-18), checked before anything else, and the error answers the gateway itself gives.
export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

/** A client's answer to a server-to-client request (sampling, elicitation, roots). */
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export type ClientMessage =
  { kind: 'request'; msg: JsonRpcRequest } | { kind: 'notification'; msg: JsonRpcNotification } | { kind: 'response'; msg: JsonRpcResponse };

/** JSON-RPC's own codes, and the gateway's (the -32000 to -32099 range is the server's to define). */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The key is missing, malformed, unknown, revoked or expired (HTTP 401). */
  unauthorized: -32001,
  /** The key may not use this server or tool, or the request's Origin is not allowed (HTTP 403 / in a 200). */
  forbidden: -32003,
  /** The session id is unknown here (HTTP 404): the client starts again with initialize. */
  sessionNotFound: -32004,
  /** RPM, budget or balance refused the call. */
  limited: -32005,
  /** The upstream MCP server failed or timed out. */
  upstream: -32006,
  /** A Guardrail blocked the tools/call's arguments (gateway/mcp/guard.ts); data names it. */
  contentBlocked: -32007,
} as const;

export interface RpcFailure {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  error: { code: number; message: string; data?: Record<string, unknown> };
}

export function rpcError(id: JsonRpcId | null, code: number, message: string, data?: Record<string, unknown>): RpcFailure {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } };
}

export class RpcRefusal extends Error {
  readonly status: number;
  readonly code: number;
  readonly data: Record<string, unknown> | undefined;
  readonly retryAfterSec: number | undefined;

  constructor(status: number, code: number, message: string, extra: { data?: Record<string, unknown>; retryAfterSec?: number } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = extra.data;
    this.retryAfterSec = extra.retryAfterSec;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is JsonRpcId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** The one message of a POST body, or a refusal that says what is wrong with it. */
export function readMessage(body: unknown): ClientMessage {
  if (Array.isArray(body)) throw new RpcRefusal(400, RPC.invalidRequest, 'Batches are not supported: send one JSON-RPC message per request (MCP 2025-06-18).');
  if (!isObject(body) || body.jsonrpc !== '2.0')
    throw new RpcRefusal(400, RPC.invalidRequest, 'The body must be one JSON-RPC 2.0 message ({"jsonrpc":"2.0", ...}).');
  const params = body.params;
  if (params !== undefined && !isObject(params)) throw new RpcRefusal(400, RPC.invalidRequest, 'params must be an object.');
  if (typeof body.method === 'string') {
    if (body.method.length === 0 || body.method.length > 256) throw new RpcRefusal(400, RPC.invalidRequest, 'method must be 1 to 256 characters.');
    if (body.id === undefined) return { kind: 'notification', msg: { jsonrpc: '2.0', method: body.method, ...(params ? { params } : {}) } };
    if (!isId(body.id)) throw new RpcRefusal(400, RPC.invalidRequest, 'id must be a string or a number.');
    return { kind: 'request', msg: { jsonrpc: '2.0', id: body.id, method: body.method, ...(params ? { params } : {}) } };
  }
  if ((isId(body.id) || body.id === null) && (isObject(body.result) || isObject(body.error))) {
    return { kind: 'response', msg: body as unknown as JsonRpcResponse };
  }
  throw new RpcRefusal(400, RPC.invalidRequest, 'The message is neither a request, a notification nor a response.');
}
