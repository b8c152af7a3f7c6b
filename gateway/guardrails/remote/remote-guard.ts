// The remote checks of one call: the request checked (and masked where the service rewrites) before admission, so a
// block costs nothing; the answer checked before the caller has it (whole), or at its end (streamed: stream.ts). Every
// finding and failure is a fact (labels only); what the checks that answered cost is charged when the call is served.
// An answer the checks refused settles as a local answer block does (answer-block.ts): 400 content_blocked, what the
// upstream produced charged, and, like on any served call, what the checks that answered cost.
import { errorBody, GatewayError, type Dialect } from '../../errors/catalog.ts';
import type { Settle } from '../../pipeline/settle.ts';
import type { CallSink, StreamWriter } from '../../pipeline/sink.ts';
import { BODY_CHANGED } from '../../translate/types.ts';
import type { Endpoint } from '../../usage/event.ts';
import type { GuardFact } from '../apply.ts';
import { blockedOutcome } from '../answer-block.ts';
import { answerPlaces, requestPlaces } from '../text-places.ts';
import { isDocument } from './documents.ts';
import type { RemoteChecks } from './policy.ts';
import { priceNano, runRemoteStage, type RemoteStageResult } from './run-stage.ts';
import { RemoteStreamWriter } from './stream.ts';
import type { CallMeta } from './types.ts';

/** Characters an answer may hold per output token, for the hold of the answer's checks (the charge never exceeds it). */
const CHARS_PER_TOKEN = 8;

export class RemoteGuard {
  /** What the checks that answered cost so far (nano-USD). */
  costNano = 0;
  private readonly checks: RemoteChecks;
  private readonly meta: CallMeta;
  private readonly endpoint: Endpoint;
  private readonly dialect: Dialect;
  private readonly signal: AbortSignal;
  private readonly record: (facts: readonly GuardFact[]) => void;
  private pending: Promise<void> | null = null;
  /** The answer (whole, or a stream's end) was refused: the call's outcome is content_blocked. */
  private answerRefused = false;

  constructor(opts: {
    checks: RemoteChecks;
    meta: CallMeta;
    endpoint: Endpoint;
    dialect: Dialect;
    signal: AbortSignal;
    record: (facts: readonly GuardFact[]) => void;
  }) {
    this.checks = opts.checks;
    this.meta = opts.meta;
    this.endpoint = opts.endpoint;
    this.dialect = opts.dialect;
    this.signal = opts.signal;
    this.record = opts.record;
  }

  /** Checks the request body in place; throws content_blocked on a block. Returns the bytes a mask added. */
  async request(body: Record<string, unknown>): Promise<number> {
    if (this.checks.request.length === 0) return 0;
    const places = requestPlaces(this.endpoint, body);
    const before = places.reduce((n, p) => n + Buffer.byteLength(p.get()), 0);
    const r = await runRemoteStage(this.checks.request, places, 'request', {
      meta: this.meta,
      signal: this.signal,
      document: (path) => isDocument(this.endpoint, body, path),
    });
    this.record(r.facts);
    if (r.blocked) throw r.blocked;
    this.costNano += r.costNano;
    if (!r.masked) return 0;
    Object.defineProperty(body, BODY_CHANGED, { value: true });
    return Math.max(0, places.reduce((n, p) => n + Buffer.byteLength(p.get()), 0) - before);
  }

  /** What admission must hold beyond the model's cost: the request's checks' cost, and the answer's at most. */
  holdNano(outputTokens: number): number {
    const chars = outputTokens * CHARS_PER_TOKEN;
    return this.costNano + this.checks.response.reduce((n, c) => n + priceNano(c.check, chars), 0);
  }

  /** The sink the answer goes through: checked before it leaves (whole), or before its end (streamed). */
  sink(inner: CallSink): CallSink {
    if (this.checks.response.length === 0) return inner;
    return {
      headers: (h) => inner.headers(h),
      json: (status, headers, body) => {
        if (status !== 200) return inner.json(status, headers, body);
        this.track(this.answer(body).then((a) => inner.json(a.status, headers, a.body)));
      },
      stream: (headers): StreamWriter =>
        new RemoteStreamWriter(inner.stream(headers), {
          endpoint: this.endpoint,
          dialect: this.dialect,
          check: (t) => this.whole(t),
          track: (p) => this.track(p),
        }),
    };
  }

  /** The settle, once the answer's checks are done (their facts, cost and verdict belong to the event). */
  settleAfter(settle: Settle): Settle {
    return async (o) => {
      await this.drained();
      return settle(this.answerRefused ? blockedOutcome(o) : o);
    };
  }

  /** Resolves once every answer check under way is done and its answer handed on. */
  async drained(): Promise<void> {
    while (this.pending) {
      const p = this.pending;
      await p;
      if (this.pending === p) this.pending = null;
    }
  }

  private track(p: Promise<void>): void {
    const before = this.pending;
    this.pending = (before ? before.then(() => p) : p).catch(() => {});
  }

  private async answer(body: string): Promise<{ status: number; body: string }> {
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return { status: 200, body };
    }
    const r = await this.stage(answerPlaces(this.endpoint, obj));
    if (r.blocked) return { status: 400, body: this.refused(r.blocked) };
    return { status: 200, body: r.masked ? JSON.stringify(obj) : body };
  }

  /** A streamed answer's whole text: null when it passed, else the error body (a rewrite counts as a block: it was sent). */
  private async whole(text: string): Promise<string | null> {
    let t = text;
    const r = await this.stage([{ path: 'stream', get: () => t, set: (s) => (t = s) }]);
    if (r.blocked) return this.refused(r.blocked);
    const m = r.facts.find((f) => f.action === 'mask');
    if (m) return this.refused(new GatewayError('content_blocked', `The answer was blocked by guardrail ${m.guardrail} (check ${m.check}: ${m.kind} found).`));
    return null;
  }

  private async stage(places: Parameters<typeof runRemoteStage>[1]): Promise<RemoteStageResult> {
    const r = await runRemoteStage(this.checks.response, places, 'response', { meta: this.meta, signal: this.signal });
    this.record(r.facts);
    this.costNano += r.costNano;
    return r;
  }

  /** The error body of a refused answer, the refusal noted for the settle. */
  private refused(e: GatewayError): string {
    this.answerRefused = true;
    return JSON.stringify(errorBody(this.dialect, 'content_blocked', e.message));
  }
}
