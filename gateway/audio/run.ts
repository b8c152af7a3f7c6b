// The pipeline of an audio call, with no HTTP in it: authenticate -> resolve -> hold the worst case (price.ts) ->
// try the chain's targets until one answers (falling back before the first byte, as every call does) -> pass the
// answer on as it comes (JSON, text, SRT, VTT, an event stream or audio bytes), reading its usage on the way ->
// settle the hold, one usage event with the unit billed. The same keys, limits, holds and events as every call.
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import { expiresInHeader } from '../contract/key-expiry.ts';
import { GatewayError } from '../errors/catalog.ts';
import { admit } from '../pipeline/admit.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import { traced } from '../pipeline/call.ts';
import type { AttemptTrace, GatewayDeps, TracedCall } from '../pipeline/context.ts';
import type { Route } from '../pipeline/dispatch.ts';
import type { Reservation } from '../pipeline/estimate.ts';
import { KEY_EXPIRES_IN_HEADER, routeHeaders } from '../pipeline/headers.ts';
import { keyCacheOf } from '../pipeline/key-cache.ts';
import { callEvents, type CallEvents } from '../pipeline/outcome.ts';
import { principal, resolveChain } from '../pipeline/resolve.ts';
import { refusedInput } from '../pipeline/settle.ts';
import { callSignal, type CallSignal } from '../pipeline/signals.ts';
import { scrubberFor } from '../providers/scrub.ts';
import { UpstreamFailure, type AudioCallFacts, type AudioOperation, type AudioOutcome } from '../providers/types.ts';
import { reasonForStatus, retryAfterSeconds, type FallbackReason } from '../routing/classify.ts';
import { weightedOrder } from '../routing/order.ts';
import type { Hold } from '../state/store.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { UsageEvent } from '../usage/event.ts';
import { chargeAudio, reserveAudio, type AudioDemand, type AudioUsage } from './price.ts';
import { UsageReader } from './usage.ts';

type Headers = Record<string, string | string[] | undefined>;

export interface AudioRequest {
  contentType: string;
  length: number;
  body: () => AsyncIterable<Uint8Array> | string;
  facts: AudioCallFacts;
}

export interface AudioSpec {
  endpoint: 'audio.transcriptions' | 'audio.translations' | 'audio.speech';
  operation: AudioOperation;
  modelType: 'transcription' | 'speech';
  modelId: string;
  stream: boolean;
  taskType: string | null;
  demand: AudioDemand;
  /** The upstream request for one target (its model id in place of the client's). */
  request: (target: CompiledTarget) => AudioRequest;
}

/** Bytes of an answer being written: `write` returns a promise only when the reader is slow (back-pressure). */
export interface ByteWriter {
  write(chunk: Uint8Array | string): Promise<void> | null;
  end(): void;
  readonly destroyed: boolean;
}

export interface AudioSink {
  /** Headers for whatever answer follows, an error included. */
  headers(h: Record<string, string>): void;
  /** Starts the answer with these headers (content-type included). */
  start(status: number, headers: Record<string, string>): ByteWriter;
}

interface AudioOutcomeFacts {
  status: number;
  errorCode: string | null;
  route: Route | null;
  ttftMs: number | null;
  contacted: boolean;
  /** The answer started: what it reported and how many bytes it carried. */
  served?: { usage: AudioUsage; bytes: number };
}

type Settle = (o: AudioOutcomeFacts) => Promise<UsageEvent>;

/** gen_ai.operation.name of each audio endpoint (as the GenAI metrics name them: http/genai-metrics.ts). */
const OPERATION: Record<AudioSpec['endpoint'], TracedCall['operation']> = {
  'audio.transcriptions': 'transcription',
  'audio.translations': 'translation',
  'audio.speech': 'speech',
};

export function runAudio(deps: GatewayDeps, spec: AudioSpec, headers: Headers, client: AbortSignal, sink: AudioSink): Promise<void> {
  // Traced as every call (pipeline/call.ts): a server span, a client span per attempt. No content is put on them:
  // neither the audio, the text to speak nor the transcript.
  const trace = deps.tracer?.start(headers, { operation: OPERATION[spec.endpoint], model: spec.modelId, dialect: 'openai', endpoint: spec.endpoint });
  const d = trace ? traced(deps, trace) : deps;
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

async function steps(deps: GatewayDeps, spec: AudioSpec, headers: Headers, client: AbortSignal, sink: AudioSink): Promise<void> {
  const started = deps.now();
  const keys = keyCacheOf(deps.store);
  const key = await authenticate(headers, 'openai', deps.store, deps.pepper, keys);
  const expiresIn = expiresInHeader(key.expiresAt, started + key.clockOffsetMs);
  if (expiresIn !== null) sink.headers({ [KEY_EXPIRES_IN_HEADER]: expiresIn });
  const snapshot = deps.config.current();
  const p = principal(snapshot, key);
  const chain = resolveChain(snapshot, p, spec.modelId, spec.modelType);
  const r = reserveAudio(chain, spec.demand);
  if (client.aborted) return;
  const events = callEvents(spec, p, started, deps.now);
  // The token bound counts against the key's TPM as input; admission refuses a call that can never fit it.
  const reservation: Reservation = {
    inputTokens: r.tokens,
    outputTokens: 0,
    holdNano: r.holdNano,
    demand: { inputBytes: 0, extraInputTokens: 0, maxTokens: undefined, choices: 1 },
  };
  const hold = await admit(deps, p, reservation, events, keys);
  const settle = settler(deps, hold, events, spec);
  if (client.aborted) {
    await settle({ status: 499, errorCode: 'client_closed', route: null, ttftMs: null, contacted: false });
    return;
  }
  const sig = callSignal(client, deps.lifecycle?.ending);
  try {
    await respond(deps, { spec, chain, settle, started }, sig, sink);
  } finally {
    sig.dispose();
  }
}

function settler(deps: GatewayDeps, hold: Hold, events: CallEvents, spec: AudioSpec): Settle {
  return async (o) => {
    const model = o.route?.model;
    const charge = model && o.served ? chargeAudio(model, spec.demand, o.served.usage, o.served.bytes) : null;
    const cost = charge ? Math.min(charge.costNano, hold.holdNano) : 0;
    const u = charge?.units;
    const usage = u ? { ...NO_USAGE, inputTokens: u.textInputTokens + u.audioInputTokens, outputTokens: u.outputTokens } : NO_USAGE;
    const base = events.of({ status: o.status, errorCode: o.errorCode, route: o.route, usage, ttftMs: o.ttftMs, contacted: o.contacted }, cost, {
      estimated: charge?.estimated ?? false,
      clamped: charge?.clamped ?? false,
    });
    const e: UsageEvent = u
      ? { ...base, ...(spec.modelType === 'transcription' ? { unit: 'seconds', units: u.seconds } : { unit: 'characters', units: u.characters }) }
      : base;
    deps.metrics.observe(e, o.route?.target.provider ?? null);
    const freeSlot =
      !o.served && refusedInput({ status: o.status, errorCode: o.errorCode, route: o.route, usage: NO_USAGE, ttftMs: null, contacted: o.contacted });
    try {
      await deps.store.settle(hold, { costNano: cost, tokens: usage.inputTokens + usage.outputTokens, event: e, freeSlot });
    } catch (err) {
      deps.log.error({ err, eventId: e.eventId }, 'Failed to settle a hold; it will expire');
    }
    return e;
  };
}

interface Failure {
  reason: FallbackReason;
  message: string;
  retryAfterSec: number | undefined;
}

interface Answer {
  route: Route;
  outcome: Extract<AudioOutcome, { kind: 'answer' }>;
  ctrl: AbortController;
  done: () => void;
  /** The attempt's span, ended once the answer is over. */
  span?: AttemptTrace;
}

interface RespondInput {
  spec: AudioSpec;
  chain: readonly CompiledModel[];
  settle: Settle;
  started: number;
}

async function respond(deps: GatewayDeps, input: RespondInput, sig: CallSignal, sink: AudioSink): Promise<void> {
  const { spec, chain, settle, started } = input;
  deps.metrics.addedLatency?.((deps.now() - started) / 1000);
  let answer: Answer;
  try {
    answer = await dispatch(deps, spec, chain, sig.signal);
  } catch (err) {
    if (sig.clientGone()) {
      await settle({ status: 499, errorCode: 'client_closed', route: null, ttftMs: null, contacted: true });
      return;
    }
    const ge = err instanceof GatewayError ? err : new GatewayError('internal_error', 'The gateway failed to dispatch the call.');
    const route = err instanceof RouteError ? err.route : null;
    await settle({ status: ge.status, errorCode: ge.code, route, ttftMs: null, contacted: true });
    sink.headers(routeHeaders(spec.modelId, route));
    if (!(err instanceof GatewayError)) deps.log.error({ err }, 'Audio dispatch failed');
    throw ge instanceof RouteError ? new GatewayError(ge.code, ge.message, { retryAfterSec: ge.retryAfterSec }) : ge;
  }
  const { route, outcome } = answer;
  const ttftMs = deps.now() - started;
  const reader = new UsageReader(outcome.contentType);
  const writer = sink.start(200, { ...routeHeaders(spec.modelId, route), 'content-type': outcome.contentType });
  let ending: { status: number; code: string | null } = { status: 200, code: null };
  // SVC_SETTLE_DURABILITY=postgres: the answer's last chunk waits until the call is settled (its usage event in
  // Postgres), so the caller never has the whole answer of a call the ledger does not hold (as chat: respond.ts).
  const holdLast = deps.settleBeforeAnswer === true;
  let held: Uint8Array | string | null = null;
  try {
    for await (const chunk of outcome.body) {
      reader.push(chunk);
      if (writer.destroyed) {
        ending = { status: 499, code: 'client_closed' };
        break;
      }
      const out = holdLast ? held : chunk;
      if (holdLast) held = chunk;
      if (out === null) continue;
      const wait = writer.write(out);
      if (wait) await wait;
    }
  } catch {
    ending = sig.clientGone()
      ? { status: 499, code: 'client_closed' }
      : sig.signal.aborted
        ? { status: 503, code: 'shutting_down' }
        : { status: 502, code: 'upstream_stream_error' };
  } finally {
    answer.done();
  }
  if (writer.destroyed && ending.status === 200) ending = { status: 499, code: 'client_closed' };
  // The upstream did the work (and bills it) once its answer started: charged on its report, else the measured units.
  const settled = (): Promise<UsageEvent> =>
    settle({ status: ending.status, errorCode: ending.code, route, ttftMs, contacted: true, served: { usage: reader.result(), bytes: reader.bytes } });
  let e: UsageEvent;
  if (held !== null && ending.status === 200) {
    e = await settled();
    const wait = writer.write(held);
    if (wait) await wait;
    writer.end();
  } else {
    writer.end();
    e = await settled();
  }
  answer.span?.end(ending.code, { usage: { ...NO_USAGE, inputTokens: e.inputTokens, outputTokens: e.outputTokens }, facts: null });
}

/** A refusal after an upstream was tried: it carries the route the headers report. */
class RouteError extends GatewayError {
  readonly route: Route | null;
  constructor(err: GatewayError, route: Route | null) {
    super(err.code, err.message, { retryAfterSec: err.retryAfterSec });
    this.route = route;
  }
}

const DONE = new Error('done');

async function dispatch(deps: GatewayDeps, spec: AudioSpec, chain: readonly CompiledModel[], signal: AbortSignal): Promise<Answer> {
  let first: Failure | null = null;
  let last: Failure | null = null;
  let lastRoute: Route | null = null;
  for (const model of chain) {
    for (const target of weightedOrder(model.targets)) {
      if (signal.aborted) throw signal.reason ?? new Error('aborted');
      const route: Route = { model, target, fallback: first !== null, fallbackReason: first?.reason ?? null };
      lastRoute = route;
      const span = deps.trace?.attempt(model, target);
      let result: Answer | Failure;
      try {
        result = await attempt(deps, spec, route, signal);
      } catch (err) {
        span?.end(err instanceof GatewayError ? err.code : 'client_closed');
        throw err;
      }
      deps.availability?.record(model.id, target.name, !('outcome' in result) && result.reason !== 'upstream_429');
      if ('outcome' in result) return span ? { ...result, span } : result;
      span?.end(result.reason);
      first ??= result;
      last = result;
    }
  }
  throw new RouteError(exhausted(last), lastRoute && { ...lastRoute, fallbackReason: first?.reason ?? null });
}

async function attempt(deps: GatewayDeps, spec: AudioSpec, route: Route, signal: AbortSignal): Promise<Answer | Failure> {
  const { target } = route;
  const provider = deps.providers.get(target.provider);
  if (!provider.audio) return { reason: 'unavailable', message: `provider ${target.provider} serves no audio endpoints`, retryAfterSec: undefined };
  const ctrl = new AbortController();
  const onAbort = (): void => ctrl.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const total = setTimeout(() => ctrl.abort(new UpstreamFailure('timeout', `no answer within ${target.timeouts.totalMs} ms`)), target.timeouts.totalMs);
  total.unref();
  const done = (): void => {
    clearTimeout(total);
    signal.removeEventListener('abort', onAbort);
    if (!ctrl.signal.aborted) ctrl.abort(DONE);
  };
  try {
    const req = spec.request(target);
    const outcome = await provider.audio({ target, operation: spec.operation, ...req, signal: ctrl.signal });
    if (outcome.kind === 'answer') return { route, outcome, ctrl, done };
    done();
    return upstreamError(route, outcome);
  } catch (err) {
    done();
    if (signal.aborted) throw signal.reason ?? err;
    const reason = ctrl.signal.reason;
    const failure = reason instanceof UpstreamFailure ? reason : err instanceof UpstreamFailure ? err : null;
    if (failure) return { reason: failure.reason, message: scrubberFor(target).scrub(failure.message), retryAfterSec: undefined };
    throw err;
  }
}

function upstreamError(route: Route, o: Extract<AudioOutcome, { kind: 'error' }>): Failure {
  const message = scrubberFor(route.target, o.sent?.()).scrub(errorMessage(o.body, o.status));
  const reason = reasonForStatus(o.status);
  if (reason) return { reason, message, retryAfterSec: retryAfterSeconds(o.retryAfter) };
  if (o.status === 401 || o.status === 403) {
    throw new RouteError(new GatewayError('upstream_error', `The upstream ${route.target.name} refused the gateway's credentials (${o.status}).`), route);
  }
  if (o.status === 413) throw new RouteError(new GatewayError('request_too_large', message), route);
  if (o.status === 404) throw new RouteError(new GatewayError('upstream_error', message), route);
  throw new RouteError(new GatewayError('invalid_request', message), route);
}

/** OpenAI's error message of an upstream's error body, or what its status says. */
function errorMessage(body: string, status: number): string {
  try {
    const m = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof m === 'string' && m !== '') return m.slice(0, 2000);
  } catch {
    // Not JSON.
  }
  return `The upstream answered ${status}.`;
}

function exhausted(last: Failure | null): GatewayError {
  if (!last) return new GatewayError('no_target_available', 'No upstream is available for this model.', { retryAfterSec: 5 });
  switch (last.reason) {
    case 'timeout':
      return new GatewayError('upstream_timeout', `Every upstream timed out: ${last.message}`);
    case 'upstream_429':
    case 'unavailable':
      return new GatewayError('no_target_available', `No upstream can take the call now: ${last.message}`, { retryAfterSec: last.retryAfterSec ?? 5 });
    default:
      return new GatewayError('upstream_error', `Every upstream failed: ${last.message}`);
  }
}
