// The request pipeline of every model endpoint, with no HTTP in it: authenticate -> resolve -> prepare -> admit ->
// respond (dispatch, answer) -> settle, one usage event. The answer goes through a CallSink; `client` aborts when the
// caller leaves. Errors before the answer starts are thrown as GatewayError for the transport to render.
import { expiresInHeader } from '../contract/key-expiry.ts';
import type { AnswerBlock } from '../guardrails/answer-block.ts';
import { CallGuard } from '../guardrails/call-guard.ts';
import { guardsFor } from '../guardrails/policy.ts';
import type { RemoteGuard } from '../guardrails/remote/remote-guard.ts';
import { remoteGuardOf, remoteRequest } from '../guardrails/remote/of-call.ts';
import { guardRequest } from '../guardrails/request-block.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { UsageEvent } from '../usage/event.ts';
import { admit } from './admit.ts';
import { cachePlan, CACHE_HEADER, hitCost, type CacheEntry, type CachePlan } from './cache.ts';
import { CaptureSink, readCache, serveHit, writeCache } from './cache-run.ts';
import { authenticate } from './authenticate.ts';
import type { CallSpec } from './call-spec.ts';
import type { CallMetrics, CallTrace, GatewayDeps } from './context.ts';
import { reserve, type Reservation } from './estimate.ts';
import { imageChain } from './image-price.ts';
import { keyCacheOf, type KeyCache } from './key-cache.ts';
import { callEvents, type CallEvents } from './outcome.ts';
import { prepareFirst, translationCache } from './prepare.ts';
import { KEY_EXPIRES_IN_HEADER } from './headers.ts';
import { principal, resolveChain, type Principal } from './resolve.ts';
import { respond } from './respond.ts';
import { settler, type Settle } from './settle.ts';
import { SettleGate } from './settle-gate.ts';
import { callSignal } from './signals.ts';
import type { CallSink } from './sink.ts';

export type { CallSpec } from './call-spec.ts';
export type { CallSink, StreamWriter } from './sink.ts';

type Headers = Record<string, string | string[] | undefined>;

export function runCall(deps: GatewayDeps, spec: CallSpec, headers: Headers, client: AbortSignal, sink: CallSink): Promise<void> {
  const trace = deps.tracer?.start(headers, {
    operation: spec.modelType === 'completions' ? 'text_completion' : spec.modelType,
    model: spec.modelId,
    dialect: spec.dialect,
    endpoint: spec.endpoint,
    body: spec.body,
  });
  const d = trace ? traced(deps, trace) : deps;
  // Counted while in flight, settle included, so a graceful shutdown waits for the hold and the usage event.
  const run = (): Promise<void> => steps(d, spec, headers, client, sink);
  const done = deps.lifecycle ? deps.lifecycle.track(run) : run();
  if (!trace) return done;
  return done.then(
    () => trace.end(),
    (err: unknown) => {
      trace.end(err);
      throw err;
    },
  );
}

/**
 * The call's own deps while tracing: its trace, and its usage event seen by the trace on the way to the metrics.
 * Every other metric goes to the process's metrics unchanged (they are the prototype), whatever CallMetrics gains.
 */
export function traced(deps: GatewayDeps, trace: CallTrace): GatewayDeps {
  const m = deps.metrics;
  const observe = (e: UsageEvent, provider?: Parameters<CallMetrics['observe']>[1]): void => {
    trace.outcome(e);
    m.observe(e, provider, trace.traceId());
  };
  const metrics = Object.create(m, { observe: { value: observe } }) as CallMetrics;
  return { ...deps, trace, metrics };
}

async function steps(deps: GatewayDeps, asked: CallSpec, headers: Headers, client: AbortSignal, given: CallSink): Promise<void> {
  const started = deps.now();
  const keys = keyCacheOf(deps.store);
  const key = await authenticate(headers, asked.dialect, deps.store, deps.pepper, keys);
  // Within a week of its expiry every answer says so (errors included), so a CLI can warn before the key stops.
  const expiresIn = expiresInHeader(key.expiresAt, started + key.clockOffsetMs);
  if (expiresIn !== null) given.headers({ [KEY_EXPIRES_IN_HEADER]: expiresIn });
  const snapshot = deps.config.current();
  const p = principal(snapshot, key);
  asked.gate?.(p);
  const resolved = resolveChain(snapshot, p, asked.modelId, asked.modelType);
  // An image call's size and quality the requested model does not serve is refused here, before any hold.
  const chain = asked.image ? imageChain(resolved, asked.image) : resolved;
  const around = asked.around;
  const spec: CallSpec = around ? { ...asked, ...(await around.begin(p.account.name)) } : asked;
  const sink = around ? around.sink(given) : given;
  // Guardrails read (and mask) the request before anything else sees it: a blocked call costs nothing.
  const guards = spec.guardBody ? guardsFor(snapshot, p, spec.endpoint, spec.modelId) : null;
  const guard = guards ? new CallGuard(guards, spec.endpoint, spec.dialect, (f) => deps.metrics.guardrail?.(f)) : null;
  const trace = deps.trace;
  if (guard && trace?.guardCheck) guard.traceTo((c) => trace.guardCheck?.(c));
  const grown = guard && spec.guardBody ? await guardRequest(deps, guard, { spec, p, started }, spec.guardBody) : 0;
  // Remote checks (the clouds' content services, webhooks) after the local ones: they see the masked text.
  const remote = spec.guardBody ? remoteGuardOf(deps, { snapshot, p, spec, client, guard }) : null;
  const remoteGrown = remote && spec.guardBody ? await remoteRequest(deps, remote, { spec, p, started }, spec.guardBody) : 0;
  // SVC_SETTLE_DURABILITY: the answer's end waits for the settle, after the guardrails had it (settle-gate.ts).
  const gate = deps.settleBeforeAnswer ? new SettleGate(sink) : null;
  const gated = gate ? gate.sink() : sink;
  const local = guard ? guard.sink(gated) : gated;
  const out = remote ? remote.guard.sink(local) : local;
  // Everything the request alone decides is decided before admission, the first target's translation included.
  const translationFor = translationCache(spec.translationFor);
  const first = chain[0] ? prepareFirst(chain[0], translationFor, deps.providers) : null;
  const r = reserve(chain, {
    inputBytes: spec.inputBytes + grown + remoteGrown,
    extraInputTokens: spec.extraInputTokens ?? 0,
    maxTokens: spec.maxTokens,
    choices: spec.choices ?? 1,
    searchUnits: spec.searchUnits ?? 0,
    ...(spec.image ? { image: spec.image } : {}),
  });
  // The response cache is read before admission (what a hit holds depends on it) and used only after it: the key,
  // its limits, budget and balance are checked for a hit as for any call.
  if (remote) r.holdNano += remote.guard.holdNano(r.outputTokens);
  const plan = cachePlan(spec, chain[0], p.account.name, headers);
  const entry = plan?.state === 'lookup' ? await readCache(deps, p.account.name, plan) : null;
  // A client gone before admission costs nothing and is not admitted.
  if (client.aborted) return;
  const events = callEvents(spec, p, started, deps.now, guard?.facts ?? remote?.facts);
  const extra = remote ? () => remote.guard.costNano : undefined;
  if (entry && plan?.state === 'lookup') {
    try {
      return await hitCall(
        deps,
        { spec, p, r, events, keys, entry, ppm: plan.hitCostPpm, remote: remote?.guard, block: guard?.answerBlock, gate },
        client,
        out,
      );
    } finally {
      gate?.open();
    }
  }
  const hold = await admit(deps, p, r, events, keys);
  const capture = plan?.state === 'lookup' && plan.write ? new CaptureSink(out, plan.maxEntryBytes) : null;
  const settled = settler(deps, hold, events, r, { guardNano: extra });
  const answered = guard ? guard.answerBlock.settle(settled) : settled;
  const cached = withCache(remote ? remote.guard.settleAfter(answered) : answered, plan, async (e) => {
    if (capture && plan?.state === 'lookup') await writeCache(deps, plan, capture, e);
  });
  const settle = gate ? gate.after(cached.settle) : cached.settle;
  if (plan) out.headers({ [CACHE_HEADER]: plan.state === 'lookup' ? 'miss' : 'bypass' });
  // The client left while the call was admitted: release the hold now, call no upstream.
  if (client.aborted) {
    await settle({ status: 499, errorCode: 'client_closed', route: null, usage: NO_USAGE, ttftMs: null, contacted: false });
    return;
  }
  // An answer a guardrail blocks ends the call as a client gone would: the upstream cancelled (guardrails/answer-block.ts).
  const sig = callSignal(guard ? guard.answerBlock.signal(client) : client, deps.lifecycle?.ending);
  try {
    await respond(deps, { modelId: spec.modelId, chain, first, translationFor, settle, started }, sig, capture ?? out);
    // An answer still being checked is sent before the call ends. (Each step below is awaited only when it exists:
    // an await of nothing still costs the call a turn of the microtask queue.)
    if (remote) await remote.guard.drained();
  } finally {
    sig.dispose();
    guard?.answerDone();
    gate?.open();
  }
  if (plan) await cached.stored();
  if (around) await around.end();
}

/**
 * The settle of a call the cache looked at: its event says miss or bypass, and a miss's answer is stored by `stored`
 * once the answer has ended (with SVC_SETTLE_DURABILITY the settle comes before the end).
 */
function withCache(settle: Settle, plan: CachePlan | null, after: (e: UsageEvent) => Promise<void>): { settle: Settle; stored: () => Promise<void> } {
  if (!plan) return { settle, stored: async () => {} };
  const state = plan.state === 'lookup' ? 'miss' : 'bypass';
  let settled: UsageEvent | null = null;
  return {
    settle: async (o) => {
      const e = await settle({ ...o, cache: state });
      settled = e;
      return e;
    },
    stored: async () => {
      if (settled) await after(settled);
    },
  };
}

interface HitInput {
  spec: CallSpec;
  p: Principal;
  r: Reservation;
  events: CallEvents;
  keys: KeyCache;
  entry: CacheEntry;
  ppm: number;
  /** The call's remote checks: a hit's answer goes through them as a miss's does. */
  remote?: RemoteGuard;
  /** The call's local response checks: a hit's answer they block settles as content_blocked, as a miss's does. */
  block?: AnswerBlock;
  /** SVC_SETTLE_DURABILITY: the answer's end waits for the settle. */
  gate: SettleGate | null;
}

/**
 * A hit: admitted like any call (revoked or expired key, RPM, budget and balance, the hold the call would need as a
 * miss, so nothing a miss would be refused passes as a hit) but reserving no tokens, then answered from the entry
 * and settled at its share of the original cost.
 */
async function hitCall(deps: GatewayDeps, h: HitInput, client: AbortSignal, sink: CallSink): Promise<void> {
  const charge = hitCost(h.entry.costNano, h.ppm);
  const r: Reservation = { ...h.r, inputTokens: 0, outputTokens: 0, holdNano: Math.max(h.r.holdNano, charge.costNano) };
  const hold = await admit(deps, h.p, r, h.events, h.keys);
  const settle = settler(deps, hold, h.events, r, { hit: charge, guardNano: h.remote ? () => h.remote!.costNano : undefined });
  const plain: Settle = (o) => settle({ ...o, cache: 'hit' });
  const local = h.block ? h.block.settle(plain) : plain;
  const checked = h.remote ? h.remote.settleAfter(local) : local;
  const hitSettle = h.gate ? h.gate.after(checked) : checked;
  // Gone before anything was served: nothing charged, the slot given back (the outcome has no `hit`).
  if (client.aborted) {
    await hitSettle({ status: 499, errorCode: 'client_closed', route: null, usage: NO_USAGE, ttftMs: null, contacted: false });
    return;
  }
  const sig = callSignal(client, deps.lifecycle?.ending);
  try {
    await serveHit(deps, { requestedModel: h.spec.modelId, entry: h.entry, settle: hitSettle }, sig, sink);
  } finally {
    sig.dispose();
  }
}
