// Steps 4 and 5: dispatch to a target (falling back before the first byte), then the answer through the sink, whole
// or streamed, and the outcome settled on every path.
import { GatewayError } from '../errors/catalog.ts';
import type { Protocol } from '../providers/types.ts';
import type { Translation } from '../translate/types.ts';
import { NO_USAGE } from '../translate/types.ts';
import type { GatewayDeps } from './context.ts';
import { dispatch, DispatchError, type Served } from './dispatch.ts';
import { routeHeaders } from './headers.ts';
import type { FirstAttempt } from './prepare.ts';
import type { Settle } from './settle.ts';
import type { CallSignal } from './signals.ts';
import type { CallSink } from './sink.ts';
import { pipeStream, type StreamResult } from './stream-out.ts';
import { StreamTee } from './stream-tee.ts';

export interface RespondInput {
  modelId: string;
  chain: Parameters<typeof dispatch>[0]['chain'];
  first: FirstAttempt | null;
  translationFor: (p: Protocol) => Translation;
  settle: Settle;
  started: number;
}

const STREAM_OUTCOMES: Record<StreamResult['outcome'], { status: number; code: string | null }> = {
  complete: { status: 200, code: null },
  client_closed: { status: 499, code: 'client_closed' },
  upstream_error: { status: 502, code: 'upstream_stream_error' },
  shutting_down: { status: 503, code: 'shutting_down' },
};

export async function respond(deps: GatewayDeps, input: RespondInput, sig: CallSignal, sink: CallSink): Promise<void> {
  const { modelId, chain, settle, started } = input;
  let served: Served;
  deps.metrics.addedLatency?.((deps.now() - started) / 1000);
  try {
    served = await dispatch({
      chain,
      translationFor: input.translationFor,
      providers: deps.providers,
      signal: sig.signal,
      first: input.first,
      health: deps.availability,
      trace: deps.trace,
    });
  } catch (err) {
    if (sig.clientGone()) {
      await settle({ status: 499, errorCode: 'client_closed', route: null, usage: NO_USAGE, ttftMs: null, contacted: true });
      return;
    }
    const ge = err instanceof GatewayError ? err : new GatewayError('internal_error', 'The gateway failed to dispatch the call.');
    const route = err instanceof DispatchError ? err.route : null;
    await settle({ status: ge.status, errorCode: ge.code, route, usage: NO_USAGE, ttftMs: null, contacted: true });
    sink.headers(routeHeaders(modelId, route));
    if (!(err instanceof GatewayError)) deps.log.error({ err }, 'Dispatch failed');
    throw ge;
  }
  const ttftMs = deps.now() - started;
  const headers = routeHeaders(modelId, served);
  const span = served.span;
  if (served.kind === 'json') {
    // What was served bounds the estimate when the upstream reported no usage: a quarter of the answer's bytes.
    const settled = (): Promise<unknown> =>
      settle({ status: 200, errorCode: null, route: served, usage: served.usage, ttftMs, contacted: true, servedOutput: Math.ceil(served.body.length / 4) });
    // Through the guardrails, then settled. With SVC_SETTLE_DURABILITY the sink holds the answer until the settle is
    // done (settle-gate.ts), so the record is in Postgres before the caller has it, with what the guardrails decided.
    sink.json(200, headers, served.body);
    if (span) {
      const facts = served.facts ?? served.translation.factsOf?.(served.body) ?? null;
      span.end(null, { usage: served.usage, facts, output: span.capture ? served.body : undefined });
    }
    await settled();
    return;
  }
  const tr = served.translation.stream(served.model.id, span !== undefined);
  const writer = sink.stream(headers);
  const tee = span?.capture ? new StreamTee(writer) : null;
  // With SVC_SETTLE_DURABILITY the stream's final event goes out in its end, which the sink holds until the settle is
  // done (settle-gate.ts). A usage report that never came (cut or abort) or came malformed is estimated (settle.ts).
  const out = await pipeStream(served, tr, tee ?? writer, { clientGone: sig.clientGone, cancel: sig.signal, holdEnd: deps.settleBeforeAnswer === true });
  span?.end(STREAM_OUTCOMES[out.outcome].code, { usage: out.usage, facts: tr.facts(), output: tee?.text(), stream: true });
  const { status, code } = STREAM_OUTCOMES[out.outcome];
  await settle({ status, errorCode: code, route: served, usage: out.usage, ttftMs, contacted: true, servedOutput: out.events > 0 ? out.events : undefined });
}
