// The request pipeline of every model endpoint: authenticate -> resolve -> admit -> dispatch -> respond ->
// settle -> one usage event. Holds are settled or released on every path.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { costNano, feeShareNano } from '../contract/money.ts';
import { errorBody, GatewayError, type Dialect } from '../errors/catalog.ts';
import type { Protocol } from '../providers/types.ts';
import type { FallbackReason } from '../routing/classify.ts';
import { MAX_AMOUNT, type Hold, type Settlement } from '../state/store.ts';
import type { Translation, Usage } from '../translate/types.ts';
import { NO_USAGE } from '../translate/types.ts';
import { newEventId, type Endpoint, type UsageEvent } from '../usage/event.ts';
import { authenticate } from './authenticate.ts';
import { watchClient, type ClientWatch } from './client-watch.ts';
import type { GatewayDeps } from './context.ts';
import { dispatch, DispatchError, type Route, type Served } from './dispatch.ts';
import { reserve } from './estimate.ts';
import { keyCacheOf } from './key-cache.ts';
import { routeHeaders } from './headers.ts';
import { prepareFirst, translationCache, type FirstAttempt } from './prepare.ts';
import { principal, resolveChain, type Principal } from './resolve.ts';
import { pipeStream, type StreamResult } from './stream-out.ts';

export interface CallSpec {
  dialect: Dialect;
  endpoint: Endpoint;
  modelType: 'chat' | 'embeddings';
  modelId: string;
  stream: boolean;
  taskType: string | null;
  maxTokens: number | undefined;
  inputBytes: number;
  translationFor: (protocol: Protocol) => Translation;
  /** Extra gate after the principal is known (the Anthropic endpoint's plan gate). */
  gate?: (p: Principal) => void;
}

interface Outcome {
  status: number;
  errorCode: string | null;
  route: Route | null;
  usage: Usage;
  ttftMs: number | null;
  /** Whether any upstream was called (dispatch started). */
  contacted: boolean;
}

export function handleCall(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: CallSpec): Promise<void> {
  // Counted while in flight, settle included, so a graceful shutdown waits for the hold and the usage event.
  return deps.lifecycle ? deps.lifecycle.track(() => call(deps, req, reply, spec)) : call(deps, req, reply, spec);
}

async function call(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: CallSpec): Promise<void> {
  const client = watchClient(reply.raw, deps.lifecycle?.ending);
  try {
    await admitAndRun(deps, req, reply, spec, client);
  } finally {
    client.dispose();
  }
}

async function admitAndRun(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: CallSpec, client: ClientWatch): Promise<void> {
  const started = deps.now();
  const keys = keyCacheOf(deps.store);
  const key = await authenticate(req.headers, spec.dialect, deps.store, deps.pepper, keys);
  const snapshot = deps.config.current();
  const p = principal(snapshot, key);
  spec.gate?.(p);
  const chain = resolveChain(snapshot, p, spec.modelId, spec.modelType);
  // Everything the request alone decides is decided before admission, the first target's translation included.
  const translationFor = translationCache(spec.translationFor);
  const first = chain[0] ? prepareFirst(chain[0], translationFor, deps.providers) : null;
  const r = reserve(chain, spec.inputBytes, spec.maxTokens);
  const eventId = newEventId();
  const event = (o: Outcome, cost: number): UsageEvent => ({
    eventId, createdAt: new Date(started).toISOString(), account: p.account.name, apiKey: key.name, taskType: spec.taskType,
    endpoint: spec.endpoint, requestedModel: spec.modelId, servedModel: o.route?.model.id ?? null, upstream: o.route?.target.name ?? null,
    fallback: o.route?.fallback ?? false, fallbackReason: (o.route?.fallbackReason ?? null) as FallbackReason | null,
    status: o.status, errorCode: o.errorCode, stream: spec.stream, inputTokens: o.usage.inputTokens, outputTokens: o.usage.outputTokens,
    cacheReadTokens: o.usage.cacheReadTokens, cacheWriteTokens: o.usage.cacheWriteTokens, costNano: cost, feeNano: feeShareNano(cost),
    latencyMs: deps.now() - started, ttftMs: o.ttftMs,
  });
  // A client gone before admission costs nothing and is not admitted.
  if (client.gone()) return;
  const decision = await deps.store.admit({ eventId, key, account: p.account, tokens: r.inputBytes + r.outputTokens, holdNano: r.holdNano, now: started });
  if (!decision.ok) {
    if (decision.code === 'key_revoked') keys.forget(key.hash);
    const err = new GatewayError(decision.code, decision.message, { retryAfterSec: decision.retryAfterSec });
    const refused = event({ status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null, contacted: false }, 0);
    await deps.store.record(refused);
    deps.metrics.observe(refused);
    throw err;
  }
  const settle = async (o: Outcome): Promise<void> => {
    const served = o.route?.model;
    const usage = boundedUsage(o.usage);
    const cost = served ? Math.min(costNano(usage.inputTokens, usage.outputTokens, served), MAX_AMOUNT) : 0;
    const e = event({ ...o, usage }, cost);
    deps.metrics.observe(e);
    await settleHold(deps, decision.hold, { costNano: cost, tokens: Math.min(usage.inputTokens + usage.outputTokens, MAX_AMOUNT), event: e, freeSlot: refusedInput(o) });
  };
  // The client left while the call was admitted: release the hold now, call no upstream.
  if (client.gone()) {
    await settle({ status: 499, errorCode: 'client_closed', route: null, usage: NO_USAGE, ttftMs: null, contacted: false });
    return;
  }
  await respond(deps, { reply, spec, chain, first, translationFor, settle, started, estInput: Math.ceil(r.inputBytes / 4) }, client);
}

/**
 * The call ends without anything served and the slot it took is given back: the input was refused (a 4xx from a
 * translator or the upstream, no tokens), or the client left before any upstream was called.
 */
function refusedInput(o: Outcome): boolean {
  if (o.usage.inputTokens !== 0 || o.usage.outputTokens !== 0) return false;
  if (o.status === 499) return !o.contacted;
  return o.status >= 400 && o.status < 500;
}

/** Token counts as a store takes them: whole, non-negative, bounded (an upstream's usage is not trusted blindly). */
function boundedUsage(u: Usage): Usage {
  const n = (x: number): number => (Number.isFinite(x) && x > 0 ? Math.min(Math.floor(x), MAX_TOKENS) : 0);
  return { inputTokens: n(u.inputTokens), outputTokens: n(u.outputTokens), cacheReadTokens: n(u.cacheReadTokens), cacheWriteTokens: n(u.cacheWriteTokens) };
}

/** More tokens than any call can carry; an upstream that reports more is capped here. */
const MAX_TOKENS = 1e12;

async function settleHold(deps: GatewayDeps, hold: Hold, s: Settlement): Promise<void> {
  try {
    await deps.store.settle(hold, s);
  } catch (err) {
    // The hold expires on its own in the store; the usage event is logged so nothing is silently lost.
    deps.log.error({ err, eventId: s.event.eventId }, 'Failed to settle a hold; it will expire');
  }
}

interface RespondInput {
  reply: FastifyReply;
  spec: CallSpec;
  chain: Parameters<typeof dispatch>[0]['chain'];
  first: FirstAttempt | null;
  translationFor: (p: Protocol) => Translation;
  settle: (o: Outcome) => Promise<void>;
  started: number;
  /** Input tokens charged when a cut stream never reported usage: a quarter of the body's bytes. */
  estInput: number;
}

async function respond(deps: GatewayDeps, input: RespondInput, client: ClientWatch): Promise<void> {
  const { reply, spec, chain, settle, started, estInput } = input;
  const signal = client.signal;
  let served: Served;
  try {
    served = await dispatch({ chain, translationFor: input.translationFor, providers: deps.providers, signal, first: input.first });
  } catch (err) {
    if (client.gone()) {
      await settle({ status: 499, errorCode: 'client_closed', route: null, usage: NO_USAGE, ttftMs: null, contacted: true });
      return;
    }
    const ge = err instanceof GatewayError ? err : new GatewayError('internal_error', 'The gateway failed to dispatch the call.');
    const route = err instanceof DispatchError ? err.route : null;
    await settle({ status: ge.status, errorCode: ge.code, route, usage: NO_USAGE, ttftMs: null, contacted: true });
    void reply.headers(routeHeaders(spec.modelId, route));
    if (!(err instanceof GatewayError)) deps.log.error({ err }, 'Dispatch failed');
    throw ge;
  }
  const ttftMs = deps.now() - started;
  const headers = routeHeaders(spec.modelId, served);
  if (served.kind === 'json') {
    void reply.code(200).headers(headers).type('application/json').send(served.body);
    await settle({ status: 200, errorCode: null, route: served, usage: served.usage, ttftMs, contacted: true });
    return;
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { ...corsHeaders(), ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  const tr = served.translation.stream(served.model.id);
  const out = await pipeStream(served, tr, res, client.gone, signal);
  let usage = out.usage;
  if (usage.inputTokens === 0 && usage.outputTokens === 0 && out.events > 0) {
    // The usage chunk never came (cut or abort): charge what we can bound, never zero.
    usage = { ...NO_USAGE, inputTokens: estInput, outputTokens: out.events };
  }
  const { status, code } = STREAM_OUTCOMES[out.outcome];
  await settle({ status, errorCode: code, route: served, usage, ttftMs, contacted: true });
}

const STREAM_OUTCOMES: Record<StreamResult['outcome'], { status: number; code: string | null }> = {
  complete: { status: 200, code: null },
  client_closed: { status: 499, code: 'client_closed' },
  upstream_error: { status: 502, code: 'upstream_stream_error' },
  shutting_down: { status: 503, code: 'shutting_down' },
};

export function corsHeaders(): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'x-svc-upstream, x-svc-fallback, x-svc-original-model, x-svc-served-model, x-svc-fallback-reason, retry-after',
  };
}

export function sendError(reply: FastifyReply, dialect: Dialect, err: GatewayError): void {
  if (err.retryAfterSec !== undefined) void reply.header('retry-after', String(err.retryAfterSec));
  void reply.code(err.status).send(errorBody(dialect, err.code, err.message, err.param));
}
