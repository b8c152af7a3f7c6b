// Step 4: try the targets of the model, then its fallbacks, until one answers. Nothing reaches the client
// before an attempt has produced its first byte, so every failure up to then may fall back.
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { scrubberFor } from '../providers/scrub.ts';
import { protocolOf, UpstreamFailure, type SentSecrets, type UpstreamOutcome } from '../providers/types.ts';
import { isContentFilterRefusal, reasonForStatus, reasonForStreamError, retryAfterSeconds, type FallbackReason } from '../routing/classify.ts';
import { weightedOrder } from '../routing/order.ts';
import { SseParser, type SseEvent } from '../sse/parser.ts';
import type { Protocol } from '../providers/types.ts';
import type { AnswerFacts, Translation, Usage } from '../translate/types.ts';
import type { FirstAttempt } from './prepare.ts';
import type { AttemptTrace, Availability, CallTrace } from './context.ts';

export interface Route {
  model: CompiledModel;
  target: CompiledTarget;
  fallback: boolean;
  fallbackReason: FallbackReason | null;
  /** Tools of the client's request the attempt's upstream request left out (x-svc-dropped-tools). */
  droppedTools?: readonly string[];
}

interface Attempt extends Route {
  translation: Translation;
  abort: () => void;
  /** The attempt's span while tracing: ended by respond once the answer is over (a stream's last event). */
  span?: AttemptTrace;
}

export type Served =
  | (Attempt & { kind: 'json'; body: string; usage: Usage; facts?: AnswerFacts })
  | (Attempt & { kind: 'stream'; first: SseEvent[]; parser: SseParser; rest: AsyncIterator<Uint8Array | string>; sent?: SentSecrets });

/** Dispatch failed after every target and fallback; carries what the headers report. */
export class DispatchError extends GatewayError {
  readonly route: Route | null;
  constructor(err: GatewayError, route: Route | null) {
    super(err.code, err.message, { retryAfterSec: err.retryAfterSec });
    this.route = route;
  }
}

interface AttemptFailure {
  reason: FallbackReason;
  message: string;
  retryAfterSec: number | undefined;
}

export interface DispatchInput {
  chain: readonly CompiledModel[];
  /** The translation from the client's dialect to an upstream protocol (built once per protocol per call). */
  translationFor: (protocol: Protocol) => Translation;
  providers: ProviderRegistry;
  signal: AbortSignal;
  random?: () => number;
  /** The first model's target order and first request, made before admission (prepare.ts). */
  first?: FirstAttempt | null;
  /** Targets in major_outage are tried last; every attempt's outcome is counted (gateway/availability). */
  health?: Availability;
  /** The call's trace, when tracing is on: a span per attempt. */
  trace?: CallTrace;
}

export async function dispatch(input: DispatchInput): Promise<Served> {
  let first: AttemptFailure | null = null;
  let last: AttemptFailure | null = null;
  let lastRoute: Route | null = null;
  const { attempts, skipped: moved } = plan(input);
  for (const { model, target } of attempts) {
    // The client left (or a shutdown ended the call) while an attempt failed: no other target is tried for it.
    if (input.signal.aborted) throw input.signal.reason ?? new Error('aborted');
    // Moved away from the first choice because it is in major_outage: the headers say `unavailable`.
    const skipped = moved !== null && moved !== target;
    const reason = moved !== null && (skipped || first !== null) ? 'unavailable' : (first?.reason ?? null);
    const route: Route = { model, target, fallback: first !== null || skipped, fallbackReason: reason };
    lastRoute = route;
    const span = input.trace?.attempt(model, target);
    let result: Served | AttemptFailure;
    try {
      result = await attempt(input, route);
    } catch (err) {
      span?.end(err instanceof GatewayError ? err.code : 'client_closed');
      throw err;
    }
    input.health?.record(model.id, target.name, !('kind' in result) && result.reason !== 'upstream_429');
    if ('kind' in result) {
      if (span) result.span = span;
      return result;
    }
    span?.end(result.reason);
    first ??= result;
    last = result;
  }
  throw new DispatchError(exhausted(last), lastRoute && { ...lastRoute, fallback: lastRoute.fallback, fallbackReason: first?.reason ?? null });
}

/**
 * The attempts in order: each model of the chain with its targets (weighted), except that targets in major_outage
 * come after every other one. `skipped` is the first choice when it was moved back that way. Plain arrays (no
 * generator): this runs on every call, and the usual call has one model with one target.
 */
function plan(input: DispatchInput): { attempts: Array<{ model: CompiledModel; target: CompiledTarget }>; skipped: CompiledTarget | null } {
  const health = input.health;
  const orderOf = (model: CompiledModel): CompiledTarget[] => (input.first?.model === model ? input.first.order : weightedOrder(model.targets, input.random));
  const head = input.chain[0];
  const headOrder = head ? orderOf(head) : [];
  const attempts: Array<{ model: CompiledModel; target: CompiledTarget }> = [];
  const later: Array<{ model: CompiledModel; target: CompiledTarget }> = [];
  for (const model of input.chain) {
    for (const target of model === head ? headOrder : orderOf(model)) (health?.isDown(model.id, target.name) ? later : attempts).push({ model, target });
  }
  const natural = headOrder[0];
  const skipped = head && natural && health?.isDown(head.id, natural.name) ? natural : null;
  return { attempts: later.length === 0 ? attempts : attempts.concat(later), skipped };
}

function exhausted(last: AttemptFailure | null): GatewayError {
  if (!last) return new GatewayError('no_target_available', 'No upstream is available for this model.', { retryAfterSec: 5 });
  switch (last.reason) {
    case 'timeout':
      return new GatewayError('upstream_timeout', `Every upstream timed out: ${last.message}`);
    case 'upstream_429':
    case 'unavailable':
      return new GatewayError('no_target_available', `No upstream can take the call now: ${last.message}`, { retryAfterSec: last.retryAfterSec ?? 5 });
    case 'connect_error':
    case 'credential_error':
    case 'upstream_5xx':
      return new GatewayError('upstream_error', `Every upstream failed: ${last.message}`);
    default: {
      const never: never = last.reason;
      return never;
    }
  }
}

/** The reason an attempt's controller is aborted once it is over: one shared error, no stack captured per call. */
const DONE = new Error('done');

async function attempt(input: DispatchInput, route: Route): Promise<Served | AttemptFailure> {
  const { target } = route;
  const ctrl = new AbortController();
  const onAbort = (): void => ctrl.abort(input.signal.reason);
  input.signal.addEventListener('abort', onAbort, { once: true });
  const total = setTimeout(() => ctrl.abort(new UpstreamFailure('timeout', `no answer within ${target.timeouts.totalMs} ms`)), target.timeouts.totalMs);
  total.unref();
  // `cancel` false: the answer was read whole, so there is nothing left to abort (and no event to dispatch).
  const finish = (cancel: boolean): void => {
    clearTimeout(total);
    input.signal.removeEventListener('abort', onAbort);
    if (cancel && !ctrl.signal.aborted) ctrl.abort(DONE);
  };
  const abort = (): void => finish(true);
  try {
    const provider = input.providers.get(target.provider);
    const translation = input.translationFor(protocolOf(provider, target));
    const prepared = input.first;
    const req = prepared && prepared.target === target && prepared.model === route.model ? prepared.request : translation.request(target, route.model);
    const outcome: UpstreamOutcome =
      req.local !== undefined
        ? { kind: 'json', status: 200, body: req.local }
        : await provider.send({
            target,
            operation: req.operation,
            body: req.load ? await req.load() : (req.bytes ?? req.body),
            stream: req.stream,
            headers: req.headers,
            signal: ctrl.signal,
            ...(req.form !== undefined ? { form: req.form } : {}),
          });
    const dropped = req.droppedTools !== undefined && req.droppedTools.length > 0 ? { droppedTools: req.droppedTools } : {};
    const served = await accept({ ...route, ...dropped, translation, abort }, outcome, ctrl);
    if (!('kind' in served)) abort();
    else if (served.kind === 'json') finish(false);
    return served;
  } catch (err) {
    abort();
    if (input.signal.aborted) throw input.signal.reason ?? err;
    const reason = ctrl.signal.reason;
    // A provider's failure text may quote an upstream's (Bedrock's timeout message): scrubbed like every error text.
    if (reason instanceof UpstreamFailure) return failure(reason.reason, scrubberFor(route.target).scrub(reason.message));
    if (err instanceof UpstreamFailure) return failure(err.reason, scrubberFor(route.target).scrub(err.message));
    throw err;
  }
}

function failure(reason: FallbackReason, message: string, retryAfterSec?: number): AttemptFailure {
  return { reason, message, retryAfterSec };
}

async function accept(a: Attempt, o: UpstreamOutcome, ctrl: AbortController): Promise<Served | AttemptFailure> {
  switch (o.kind) {
    case 'json': {
      const { body, usage, facts } = a.translation.response(o.body, a.model.id);
      return { ...a, kind: 'json', body, usage, facts };
    }
    case 'error':
      return upstreamError(a, o);
    case 'stream':
      return firstEvents(a, o.body, ctrl, o.sent);
    default: {
      const never: never = o;
      return never;
    }
  }
}

function upstreamError(route: Attempt, o: Extract<UpstreamOutcome, { kind: 'error' }>): AttemptFailure {
  const reason = reasonForStatus(o.status);
  const message = scrubberFor(route.target, o.sent?.()).scrub(route.translation.errorMessage(o.body, o.status));
  if (reason) return failure(reason, message, retryAfterSeconds(o.retryAfter));
  // Not worth another target: the request itself was refused, or our credentials/config are wrong.
  if (o.status === 401 || o.status === 403) {
    throw new DispatchError(new GatewayError('upstream_error', `The upstream ${route.target.name} refused the gateway's credentials (${o.status}).`), route);
  }
  if (o.status === 413) throw new DispatchError(new GatewayError('request_too_large', message), route);
  if (isContentFilterRefusal(o.status, o.body)) throw new DispatchError(new GatewayError('content_filter', message), route);
  if (o.status === 404) throw new DispatchError(new GatewayError('upstream_error', message), route);
  throw new DispatchError(new GatewayError('invalid_request', message), route);
}

async function firstEvents(
  route: Attempt,
  body: AsyncIterable<Uint8Array | string>,
  ctrl: AbortController,
  sent: SentSecrets | undefined,
): Promise<Served | AttemptFailure> {
  const parser = new SseParser();
  const rest = body[Symbol.asyncIterator]();
  const timer = setTimeout(
    () => ctrl.abort(new UpstreamFailure('timeout', `no first byte within ${route.target.timeouts.firstByteMs} ms`)),
    route.target.timeouts.firstByteMs,
  );
  try {
    for (;;) {
      const next = await rest.next().catch((err: unknown) => {
        if (ctrl.signal.aborted) throw err;
        return failure('connect_error', `the upstream stream failed before its first event (${(err as { code?: string }).code ?? 'error'})`);
      });
      if ('reason' in next) return next;
      if (next.done) return failure('connect_error', 'the upstream closed the stream before its first event');
      const events = parser.push(next.value);
      if (events.length === 0) continue;
      const e = events[0] as SseEvent;
      // An error first (OpenAI's error chunk, Anthropic's and the Responses API's error or response.failed event):
      // nothing reached the client yet, so the next target may take the call.
      if (e.event === 'error' || e.event === 'response.failed' || (e.data.startsWith('{"error"') && !e.data.includes('"choices"'))) {
        return failure(reasonForStreamError(e.data), 'the upstream stream began with an error event');
      }
      return { ...route, kind: 'stream', first: events, parser, rest, sent };
    }
  } finally {
    clearTimeout(timer);
  }
}
