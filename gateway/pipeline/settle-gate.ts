// SVC_SETTLE_DURABILITY=postgres: a call is settled (its usage event committed in Postgres) before the caller has the
// end of its answer. The answer still passes the guardrails first, so the settle records what they decided (an answer
// they blocked, their facts, what their remote checks cost): this sink, the last before the transport, holds a whole
// answer and a stream's end (its final event, which the stream keeps for that last write) until the settle is done.
import type { Settle } from './settle.ts';
import type { CallSink, StreamWriter } from './sink.ts';

export class SettleGate {
  private opened = false;
  private held: Array<() => void> = [];
  private readonly inner: CallSink;

  constructor(inner: CallSink) {
    this.inner = inner;
  }

  /** The sink that waits for the settle: headers and a stream's events pass, a JSON answer and a stream's end wait. */
  sink(): CallSink {
    return {
      headers: (h) => this.inner.headers(h),
      json: (status, headers, body) => this.when(() => this.inner.json(status, headers, body)),
      stream: (headers): StreamWriter => {
        const w = this.inner.stream(headers);
        return {
          write: (text) => w.write(text),
          end: (text) => this.when(() => w.end(text)),
          get destroyed() {
            return w.destroyed;
          },
        };
      },
    };
  }

  /** The settle that opens the gate once it is done (or failed: an answer is never kept from its caller). */
  after(settle: Settle): Settle {
    return async (o) => {
      try {
        return await settle(o);
      } finally {
        this.open();
      }
    };
  }

  /** Lets what waits go, and what comes after pass at once. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    const held = this.held;
    this.held = [];
    for (const f of held) f();
  }

  private when(f: () => void): void {
    if (this.opened) f();
    else this.held.push(f);
  }
}
