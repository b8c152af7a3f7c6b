// The guardrails of one call: the request checked (and masked) before admission, so a blocked call costs nothing;
// the answer checked before the caller sees it, whole or streamed (stream-guard.ts); every match a fact on the usage
// event, never the matched text.
import type { Dialect } from '../errors/catalog.ts';
import { errorBody } from '../errors/catalog.ts';
import type { CallSink, StreamWriter } from '../pipeline/sink.ts';
import { BODY_CHANGED } from '../translate/types.ts';
import type { Endpoint } from '../usage/event.ts';
import { applyChecks, blockedError, type GuardFact } from './apply.ts';
import { AnswerBlock } from './answer-block.ts';
import { CheckTimes, type CheckSink } from './check-times.ts';
import { Masker } from './masker.ts';
import type { CallGuards } from './policy.ts';
import { StreamGuard } from './stream-guard.ts';
import { answerPlaces, requestPlaces } from './text-places.ts';

export class CallGuard {
  readonly facts: GuardFact[] = [];
  readonly masker = new Masker();
  /** An answer blocked: the upstream cancelled, the outcome named (answer-block.ts). */
  readonly answerBlock = new AnswerBlock();
  private readonly guards: CallGuards;
  private readonly endpoint: Endpoint;
  private readonly dialect: Dialect;
  /** Counts each fact as it is made (metrics). */
  private readonly count: (f: GuardFact) => void;
  private times: CheckTimes | null = null;

  constructor(guards: CallGuards, endpoint: Endpoint, dialect: Dialect, count: (f: GuardFact) => void) {
    this.guards = guards;
    this.endpoint = endpoint;
    this.dialect = dialect;
    this.count = count;
  }

  /**
   * Checks and masks the request body in place; throws content_blocked on a block. Returns how many bytes the
   * placeholders added, which the call's input bound must include.
   */
  request(body: Record<string, unknown>): number {
    if (this.guards.request.length === 0) return 0;
    const places = requestPlaces(this.endpoint, body);
    const before = places.reduce((n, p) => n + Buffer.byteLength(p.get()), 0);
    const r = applyChecks(this.guards.request, places, 'request', this.masker, this.times?.of('request'));
    this.record(r.facts);
    this.times?.emit('request', this.facts, r.blocked);
    if (r.blocked) throw blockedError(r.blocked);
    const after = places.reduce((n, p) => n + Buffer.byteLength(p.get()), 0);
    // The client's raw bytes no longer say what is sent: nothing may be spliced on them.
    if (r.facts.some((f) => f.action === 'mask')) Object.defineProperty(body, BODY_CHANGED, { value: true });
    return Math.max(0, after - before);
  }

  /** While the call is traced: a span per check and stage, made as each stage ends (check-times.ts). */
  traceTo(sink: CheckSink): void {
    this.times = new CheckTimes(this.guards, sink);
  }

  /** The answer's checks are over (the call answered, whole or streamed): their spans. */
  answerDone(): void {
    this.times?.emit('response', this.facts, this.answerBlock.blocked);
  }

  /** The sink the answer goes through: checked, masked and restored on the way. */
  sink(inner: CallSink): CallSink {
    if (this.guards.response.length === 0 && !this.masker.restores) return inner;
    return {
      headers: (h) => inner.headers(h),
      json: (status, headers, body) => inner.json(...this.answer(status, headers, body)),
      stream: (headers): StreamWriter => new StreamGuard(inner.stream(headers), this, this.endpoint, this.dialect),
    };
  }

  /** Response-stage checks over one text, in order; returns the text to send, or null when a check blocked. */
  checkText(text: string): { text: string; blocked: GuardFact | null } {
    const place = { path: 'stream', get: () => text, set: (t: string) => (text = t) };
    const r = applyChecks(this.guards.response, [place], 'response', this.masker, this.times?.of('response'));
    this.record(r.facts);
    if (r.blocked) this.answerBlock.note(r.blocked);
    return { text: this.masker.restore(text), blocked: r.blocked };
  }

  blockedBody(f: GuardFact): string {
    return JSON.stringify(errorBody(this.dialect, 'content_blocked', blockedError(f).message));
  }

  record(facts: readonly GuardFact[]): void {
    for (const f of facts) {
      const same = this.facts.find((x) => x.guardrail === f.guardrail && x.check === f.check && x.kind === f.kind && x.stage === f.stage);
      if (same) same.count += f.count;
      else this.facts.push({ ...f });
      this.count(f);
    }
  }

  private answer(status: number, headers: Record<string, string>, body: string): [number, Record<string, string>, string] {
    if (status !== 200) return [status, headers, body];
    let obj: Record<string, unknown>;
    try {
      obj = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return [status, headers, body];
    }
    const places = answerPlaces(this.endpoint, obj);
    const r = applyChecks(this.guards.response, places, 'response', this.masker, this.times?.of('response'));
    this.record(r.facts);
    if (r.blocked) {
      this.answerBlock.note(r.blocked);
      return [400, headers, this.blockedBody(r.blocked)];
    }
    if (this.masker.restores) for (const p of places) p.set(this.masker.restore(p.get()));
    return [status, headers, r.facts.length > 0 || this.masker.restores ? JSON.stringify(obj) : body];
  }
}
