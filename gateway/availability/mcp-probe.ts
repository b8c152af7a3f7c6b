// One probe of an McpServer: what any MCP client does first, with the server's own credential and timeouts:
// initialize, notifications/initialized, ping, then DELETE of the session it opened (an upstream keeps no session
// of ours). Straight to the upstream, never through a key's admission: no account is billed, no tool is called.
// On the status page an McpServer is the subject `mcp:<name>` (as on the metrics) with one target, its name.
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { collect } from '../mcp/collect.ts';
import { callUpstream, UpstreamFailed, type UpstreamAnswer } from '../mcp/upstream.ts';
import { mcpSubject, type ProbeResult } from './types.ts';

const PROTOCOL = '2025-06-18';
const CLIENT = { name: 'svc-gateway-probe', version: '1.0.0' };

class ProbeFailed extends Error {
  readonly status: number | null;
  constructor(message: string, status: number | null) {
    super(message);
    this.status = status;
  }
}

/** The result of one request of the probe, or why it failed (the upstream's message is not echoed: a status, a code). */
async function answered(up: UpstreamAnswer, id: number, what: string): Promise<Record<string, unknown>> {
  if (up.status < 200 || up.status >= 300) {
    // Read to its end (a refusal is short); destroying an undici body would raise an error nobody listens to.
    up.body.resume();
    throw new ProbeFailed(`${what} answered HTTP ${up.status}`, up.status);
  }
  const r = await collect(up, id, 'probe');
  const error = r?.error as { code?: unknown } | undefined;
  if (error) throw new ProbeFailed(`${what} answered JSON-RPC error ${String(error.code)}`, up.status);
  const result = r?.result;
  if (typeof result !== 'object' || result === null) throw new ProbeFailed(`${what} answered no result`, up.status);
  return result as Record<string, unknown>;
}

export async function probeMcpServer(server: CompiledMcpServer, at: number, now: () => number = Date.now): Promise<ProbeResult> {
  const started = now();
  const base = { model: mcpSubject(server.name), target: server.name, at, costNano: 0 };
  const limitMs = Math.min(server.timeouts.totalMs, server.timeouts.connectMs + server.timeouts.firstByteMs);
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), limitMs);
  timer.unref();
  let sessionId: string | null = null;
  let version: string | null = null;
  let status: number | null = null;
  try {
    const post = (msg: object): Promise<UpstreamAnswer> =>
      callUpstream(server, { method: 'POST', body: JSON.stringify(msg), sessionId, protocolVersion: version }, ctrl.signal);
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: CLIENT } });
    status = init.status;
    sessionId = init.sessionId;
    const result = await answered(init, 1, 'initialize');
    version = typeof result.protocolVersion === 'string' ? result.protocolVersion : PROTOCOL;
    (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).body.resume();
    await answered(await post({ jsonrpc: '2.0', id: 2, method: 'ping' }), 2, 'ping');
    if (ctrl.signal.aborted) throw new ProbeFailed(`no answer within ${limitMs} ms`, null);
    const latencyMs = now() - started;
    return { ...base, ok: true, latencyMs, status, message: `${server.name}: OK in ${latencyMs} ms` };
  } catch (err) {
    let message = 'connect error';
    if (ctrl.signal.aborted) message = `timeout: no answer within ${limitMs} ms`;
    else if (err instanceof ProbeFailed || err instanceof UpstreamFailed) message = err.message;
    if (err instanceof ProbeFailed) status = err.status;
    return { ...base, ok: false, latencyMs: now() - started, status, message: `${server.name}: ${message}` };
  } finally {
    clearTimeout(timer);
    if (sessionId !== null) await closeSession(server, sessionId, version, limitMs);
  }
}

/** Ends the probe's session at the upstream (best effort: an upstream that refuses DELETE lets it expire). */
async function closeSession(server: CompiledMcpServer, sessionId: string, version: string | null, limitMs: number): Promise<void> {
  try {
    const up = await callUpstream(server, { method: 'DELETE', sessionId, protocolVersion: version }, AbortSignal.timeout(limitMs));
    up.body.resume();
  } catch {
    // Nothing to do: the session expires at the upstream.
  }
}
