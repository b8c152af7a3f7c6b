// Guardrails on MCP tool calls (a Guardrail whose endpoints list `mcp`; its models selector matches
// `mcp:<server>/<tool>`): a tools/call's arguments are the request stage, checked and masked before the McpServer
// sees them; the tool's result, or the text of the JSON-RPC error it answered with, is the response stage, checked
// (and masked, placeholders restored) before the client sees it. A blocked request is a JSON-RPC error (content
// blocked, no upstream call, nothing charged, one usage event that records it); a blocked result or error is a tool
// result with isError (the tool ran: MCP reports what happened in a call as its result, so the agent's model reads
// why), the call settled as content_blocked at no charge. Facts on the call's usage event, counts on the metric,
// never the text.
import { mcpSubject } from '../availability/types.ts';
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { applyChecks, blockedError, type GuardFact } from '../guardrails/apply.ts';
import { Masker } from '../guardrails/masker.ts';
import { guardsFor, type CallGuards } from '../guardrails/policy.ts';
import type { TextPlace } from '../guardrails/text-places.ts';
import { callEvents } from '../pipeline/outcome.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { McpContext } from './context.ts';
import { RPC, RpcRefusal } from './jsonrpc.ts';
import type { Message } from './relay.ts';

/** Structure, identifiers and binary in arguments and results: never read, never changed. */
const SKIP = new Set(['type', 'uri', 'mimeType', 'data', 'blob', '_meta', 'annotations']);

const isObject = (v: unknown): v is Message => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every string under a value (object values and array items), each a place to read and write. */
function stringPlaces(holder: Message | unknown[], key: string | number, path: string, out: TextPlace[]): void {
  const v = (holder as Record<string | number, unknown>)[key];
  if (typeof v === 'string') {
    out.push({ path, get: () => (holder as Record<string | number, string>)[key]!, set: (t) => ((holder as Record<string | number, unknown>)[key] = t) });
  } else if (Array.isArray(v)) {
    v.forEach((_, i) => stringPlaces(v, i, `${path}[${i}]`, out));
  } else if (isObject(v)) {
    for (const k of Object.keys(v)) if (!SKIP.has(k)) stringPlaces(v, k, `${path}.${k}`, out);
  }
}

export class ToolGuard {
  readonly facts: GuardFact[] = [];
  private readonly masker = new Masker();
  private readonly guards: CallGuards;
  private readonly count: (f: GuardFact) => void;
  private blockedBy: GuardFact | null = null;

  constructor(guards: CallGuards, count: (f: GuardFact) => void) {
    this.guards = guards;
    this.count = count;
  }

  /** The response-stage check that blocked the result, if one did. */
  get blocked(): GuardFact | null {
    return this.blockedBy;
  }

  /** The tools/call's arguments checked and masked in place; the refusal the client gets when a check blocked. */
  request(params: Message): RpcRefusal | null {
    if (this.guards.request.length === 0) return null;
    const places: TextPlace[] = [];
    stringPlaces(params, 'arguments', 'arguments', places);
    const r = applyChecks(this.guards.request, places, 'request', this.masker);
    this.record(r.facts);
    if (!r.blocked) return null;
    const f = r.blocked;
    return new RpcRefusal(200, RPC.contentBlocked, blockedError(f).message, { data: { type: 'content_blocked', guardrail: f.guardrail, check: f.check } });
  }

  /** The tool's answer as the client gets it: its result checked, masked and restored; a block, an isError result. */
  response(m: Message): Message {
    if (this.guards.response.length === 0 && !this.masker.restores) return m;
    if (isObject(m.result)) return this.checked(m, 'result', ['content', 'structuredContent']);
    // A JSON-RPC error's text is the tool's answer too (a server may quote the arguments or its data in it).
    if (isObject(m.error)) return this.checked(m, 'error', ['message', 'data']);
    return m;
  }

  /** The strings of m[part] under `keys`, checked on a copy: masked and restored, or the blocked result in its place. */
  private checked(m: Message, part: 'result' | 'error', keys: readonly string[]): Message {
    const copy = structuredClone(m[part]) as Message;
    const places: TextPlace[] = [];
    for (const k of keys) stringPlaces(copy, k, `${part}.${k}`, places);
    const r = applyChecks(this.guards.response, places, 'response', this.masker);
    this.record(r.facts);
    if (r.blocked) {
      this.blockedBy = r.blocked;
      const { error: _error, ...rest } = m;
      return { ...rest, result: { content: [{ type: 'text', text: blockedError(r.blocked).message }], isError: true } };
    }
    if (this.masker.restores) for (const p of places) p.set(this.masker.restore(p.get()));
    return { ...m, [part]: copy };
  }

  private record(facts: readonly GuardFact[]): void {
    for (const f of facts) {
      const same = this.facts.find((x) => x.guardrail === f.guardrail && x.check === f.check && x.kind === f.kind && x.stage === f.stage);
      if (same) same.count += f.count;
      else this.facts.push({ ...f });
      this.count(f);
    }
  }
}

/** The guard of one tools/call, or null when no Guardrail covers it (the common case). */
export function toolGuardFor(ctx: McpContext, server: CompiledMcpServer, tool: string): ToolGuard | null {
  const guards = guardsFor(ctx.snapshot, ctx.p, 'mcp', `${mcpSubject(server.name)}/${tool}`);
  return guards ? new ToolGuard(guards, (f) => ctx.deps.metrics.guardrail?.(f)) : null;
}

/** A tools/call refused for its arguments: one usage event records it (cost 0, no admission), then the refusal. */
export async function recordBlocked(ctx: McpContext, server: CompiledMcpServer, tool: string, guard: ToolGuard): Promise<void> {
  const id = `${mcpSubject(server.name)}/${tool}`;
  const events = callEvents({ endpoint: 'mcp', taskType: null, modelId: id, stream: false }, ctx.p, ctx.deps.now(), ctx.deps.now, guard.facts);
  const e = {
    ...events.of({ status: 400, errorCode: 'content_blocked', route: null, usage: NO_USAGE, ttftMs: null, contacted: false }, 0),
    upstream: server.name,
  };
  ctx.deps.metrics.observe(e);
  await ctx.deps.store.record(e);
}
