// The request pipeline of every model endpoint: authenticate -> resolve -> admit -> dispatch -> respond ->
// settle -> one usage event. Holds are settled or released on every path.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { costNano, feeShareNano } from '../contract/money.ts';
import { errorBody, GatewayError, type Dialect } from '../errors/catalog.ts';
import type { Protocol } from '../providers/types.ts';
import type { FallbackReason } from '../routing/classify.ts';
import type { Hold } from '../state/store.ts';
import type { Translation, Usage } from '../translate/types.ts';
import { NO_USAGE } from '../translate/types.ts';
import { newEventId, type Endpoint, type UsageEvent } from '../usage/event.ts';
import { authenticate } from './authenticate.ts';
import type { GatewayDeps } from './context.ts';
import { dispatch, DispatchError, type Route, type Served } from './dispatch.ts';
import { reserve } from './estimate.ts';
import { keyCacheOf } from './key-cache.ts';
import { routeHeaders } from './headers.ts';
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
}

export function handleCall(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: CallSpec): Promise<void> {
  // Counted while in flight, settle included, so a graceful shutdown waits for the hold and the usage event.
  return deps.lifecycle ? deps.lifecycle.track(() => call(deps, req, reply, spec)) : call(deps, req, reply, spec);
}

async function call(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: CallSpec): Promise<void> {
  const started = deps.now();
  const keys = keyCacheOf(deps.store);
  const key = await authenticate(req.headers, spec.dialect, deps.store, deps.pepper, keys);
  const snapshot = deps.config.current();
  const p = principal(snapshot, key);
  spec.gate?.(p);
  const chain = resolveChain(snapshot, p, spec.modelId, spec.modelType);
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
  const decision = await deps.store.admit({ eventId, key, account: p.account, tokens: r.inputTokens + r.outputTokens, holdNano: r.holdNano, now: started });
  if (!decision.ok) {
    if (decision.code === 'key_revoked') keys.forget(key.hash);
    const err = new GatewayError(decision.code, decision.message, { retryAfterSec: decision.retryAfterSec });
    await deps.store.record(event({ status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null }, 0));
    deps.metrics.observe(event({ status: err.status, errorCode: err.code, route: null, usage: NO_USAGE, ttftMs: null }, 0));
    throw err;
  }
  const settle = async (o: Outcome): Promise<void> => {
    const served = o.route?.model;
    const cost = served ? costNano(o.usage.inputTokens, o.usage.outputTokens, served) : 0;
    const e = event(o, cost);
    deps.metrics.observe(e);
    await settleHold(deps, decision.hold, cost, o.usage, e);
  };
  await run(deps, { reply, spec, chain, settle, started, estInput: Math.ceil(r.inputTokens / 4) });
}

async function settleHold(deps: GatewayDeps, hold: Hold, cost: number, usage: Usage, e: UsageEvent): Promise<void> {
  try {
    await deps.store.settle(hold, { costNano: cost, tokens: usage.inputTokens + usage.outputTokens, event: e });
  } catch (err) {
    // The hold expires on its own in the store; the usage event is logged so nothing is silently lost.
    deps.log.error({ err, eventId: e.eventId }, 'Failed to settle a hold; it will expire');
  }
}

interface RunInput {
  reply: FastifyReply;
  spec: CallSpec;
  chain: Parameters<typeof dispatch>[0]['chain'];
  settle: (o: Outcome) => Promise<void>;
  started: number;
  estInput: number;
}

async function run(deps: GatewayDeps, input: RunInput): Promise<void> {
  const { reply } = input;
  // Cancels the upstream call when the client goes away, or when a shutdown ends the calls still in flight.
  const ctrl = new AbortController();
  let clientClosed = false;
  const onClose = (): void => {
    if (reply.raw.writableFinished) return;
    clientClosed = true;
    ctrl.abort(new Error('client closed the connection'));
  };
  reply.raw.on('close', onClose);
  const ending = deps.lifecycle?.ending;
  const onEnding = (): void => ctrl.abort(ending?.reason);
  if (ending?.aborted) onEnding();
  ending?.addEventListener('abort', onEnding, { once: true });
  try {
    await respond(deps, input, ctrl.signal, () => clientClosed);
  } finally {
    reply.raw.off('close', onClose);
    ending?.removeEventListener('abort', onEnding);
  }
}

async function respond(deps: GatewayDeps, input: RunInput, signal: AbortSignal, clientGone: () => boolean): Promise<void> {
  const { reply, spec, chain, settle, started, estInput } = input;
  let served: Served;
  try {
    const cache = new Map<Protocol, Translation>();
    const translationFor = (p: Protocol): Translation => {
      let t = cache.get(p);
      if (!t) cache.set(p, (t = spec.translationFor(p)));
      return t;
    };
    served = await dispatch({ chain, translationFor, providers: deps.providers, signal });
  } catch (err) {
    if (clientGone()) {
      await settle({ status: 499, errorCode: 'client_closed', route: null, usage: NO_USAGE, ttftMs: null });
      return;
    }
    const ge = err instanceof GatewayError ? err : new GatewayError('internal_error', 'The gateway failed to dispatch the call.');
    const route = err instanceof DispatchError ? err.route : null;
    await settle({ status: ge.status, errorCode: ge.code, route, usage: NO_USAGE, ttftMs: null });
    void reply.headers(routeHeaders(spec.modelId, route));
    if (!(err instanceof GatewayError)) deps.log.error({ err }, 'Dispatch failed');
    throw ge;
  }
  const ttftMs = deps.now() - started;
  const headers = routeHeaders(spec.modelId, served);
  if (served.kind === 'json') {
    void reply.code(200).headers(headers).type('application/json').send(served.body);
    await settle({ status: 200, errorCode: null, route: served, usage: served.usage, ttftMs });
    return;
  }
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { ...corsHeaders(), ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  const tr = served.translation.stream(served.model.id);
  const out = await pipeStream(served, tr, res, clientGone, signal);
  let usage = out.usage;
  if (usage.inputTokens === 0 && usage.outputTokens === 0 && out.events > 0) {
    // The usage chunk never came (cut or abort): charge what we can bound, never zero.
    usage = { ...NO_USAGE, inputTokens: estInput, outputTokens: out.events };
  }
  const { status, code } = STREAM_OUTCOMES[out.outcome];
  await settle({ status, errorCode: code, route: served, usage, ttftMs });
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
