// Money and limits of one tools/call, through the model calls' own steps: admitted by pipeline/admit.ts (revoked or
// expired key, RPM, a hold for the tool's price against the key's budget and the account's balance, in one atomic
// store operation; a refusal is recorded as a usage event and thrown), then settled by the store to the exact
// price when the tool answered, to nothing when it failed. One usage event per call: endpoint `mcp`, requested and
// served model `mcp:<server>/<tool>` (so the usage page, its CSV, the statement and the spend dashboards show tool
// calls beside the models, told apart from them), upstream the McpServer. Free tools go the same way (RPM, usage).
import { mcpSubject } from '../availability/types.ts';
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import type { GuardFact } from '../guardrails/apply.ts';
import { admit } from '../pipeline/admit.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import type { Reservation } from '../pipeline/estimate.ts';
import { keyCacheOf } from '../pipeline/key-cache.ts';
import { callEvents, type CallEvents } from '../pipeline/outcome.ts';
import type { Principal } from '../pipeline/resolve.ts';
import { NO_USAGE } from '../translate/types.ts';
import { toolPriceNano } from './access.ts';

/** How the call ended: served (the tool answered, not with isError), or failed with a status and code. */
export type ToolOutcome = { ok: true } | { ok: false; status: number; errorCode: string };

export type SettleTool = (o: ToolOutcome) => Promise<void>;

/** `facts`: the call's guardrail facts (guard.ts), read when it settles. */
export async function admitToolCall(
  deps: GatewayDeps,
  p: Principal,
  server: CompiledMcpServer,
  tool: string,
  facts?: readonly GuardFact[],
): Promise<SettleTool> {
  const priceNano = toolPriceNano(server, tool);
  const id = `${mcpSubject(server.name)}/${tool}`;
  const base = callEvents({ endpoint: 'mcp', taskType: null, modelId: id, stream: false }, p, deps.now(), deps.now, facts);
  const events: CallEvents = { eventId: base.eventId, started: base.started, of: (o, cost, f) => ({ ...base.of(o, cost, f), upstream: server.name }) };
  const r: Reservation = { inputTokens: 0, outputTokens: 0, holdNano: priceNano, demand: { inputBytes: 0, extraInputTokens: 0, maxTokens: 0, choices: 1 } };
  const hold = await admit(deps, p, r, events, keyCacheOf(deps.store));
  let settled = false;
  return async (o) => {
    if (settled) return;
    settled = true;
    const cost = o.ok ? priceNano : 0;
    const outcome = { status: o.ok ? 200 : o.status, errorCode: o.ok ? null : o.errorCode, route: null, usage: NO_USAGE, ttftMs: null, contacted: true };
    const e = { ...events.of(outcome, cost), ...(o.ok ? { servedModel: id } : {}) };
    deps.metrics.observe(e);
    // The live traffic the status page judges an McpServer by, with its probes: upstream failures only.
    deps.availability?.record(mcpSubject(server.name), server.name, !o.ok && o.errorCode === 'upstream_error');
    try {
      await deps.store.settle(hold, { costNano: cost, tokens: 0, event: e });
    } catch (err) {
      deps.log.error({ err, eventId: e.eventId }, 'Failed to settle a hold; it will expire');
    }
  };
}
