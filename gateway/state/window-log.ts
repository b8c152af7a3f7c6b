// A key's sliding 60-second window in memory: one entry per admitted call (time, tokens), oldest first, with the
// token total kept as it changes. Admitting, trimming and correcting a call's tokens cost O(1) amortized whatever
// the rate (a busy key holds a minute of calls: 500,000 entries at 8,000 calls/s), the same work as the Redis
// store's sorted set and running sum. The entries live in two typed-array columns, not one object each: a minute of
// calls is nothing for the garbage collector to trace (objects made its pauses show in the tail latency).
//
// Each call is known by the sequence number add() returns. Times only move forward: a time earlier than the last
// one (a clock step back) is counted from the last one, so the call stays in the window a little longer, never less.
// A call refused after admission is forgotten: its entry stays as a tombstone (tokens -1) that counts for nothing
// until it leaves the window, so count and tokens stay exact (entry(i), read only for a retry-after hint, may then
// point one entry late).
import type { WindowView } from './admission.ts';

export class WindowLog implements WindowView {
  private at = new Float64Array(64);
  private n = new Float64Array(64);
  /** Sequence numbers of the first live entry and of the next one; `base` is the sequence number at index 0. */
  private start = 0;
  private end = 0;
  private base = 0;
  /** Tombstones still inside the window. */
  private forgotten = 0;
  tokens = 0;

  get count(): number {
    return this.end - this.start - this.forgotten;
  }

  entry(i: number): { at: number; n: number } {
    const k = this.start - this.base + i;
    return { at: this.at[k] as number, n: Math.max(0, this.n[k] as number) };
  }

  /** Drops the calls admitted at or before `edge`. */
  trim(edge: number): void {
    let k = this.start - this.base;
    const last = this.end - this.base;
    while (k < last && (this.at[k] as number) <= edge) {
      const n = this.n[k++] as number;
      if (n < 0) this.forgotten--;
      else this.tokens -= n;
    }
    this.start = this.base + k;
  }

  /** Appends a call; returns its sequence number (for setTokens). */
  add(at: number, n: number): number {
    if (this.end - this.base === this.at.length) this.makeRoom();
    const k = this.end - this.base;
    const prev = k > this.start - this.base ? (this.at[k - 1] as number) : at;
    this.at[k] = Math.max(at, prev);
    this.n[k] = n;
    this.tokens += n;
    return this.end++;
  }

  /** The call's actual tokens once settled, if it is still in the window. */
  setTokens(seq: number, n: number): void {
    if (seq < this.start || seq >= this.end) return;
    const k = seq - this.base;
    const was = this.n[k] as number;
    if (was < 0) return;
    this.tokens += n - was;
    this.n[k] = n;
  }

  /** Takes a call out of the count and the token total (it was refused after admission). */
  forget(seq: number): void {
    if (seq < this.start || seq >= this.end) return;
    const k = seq - this.base;
    const was = this.n[k] as number;
    if (was < 0) return;
    this.tokens -= was;
    this.n[k] = -1;
    this.forgotten++;
  }

  /** Moves the live entries to the front, doubling the columns when they are more than half full. */
  private makeRoom(): void {
    const live = this.end - this.start;
    const from = this.start - this.base;
    if (live * 2 > this.at.length) {
      const at = new Float64Array(this.at.length * 2);
      const n = new Float64Array(this.at.length * 2);
      at.set(this.at.subarray(from, from + live));
      n.set(this.n.subarray(from, from + live));
      this.at = at;
      this.n = n;
    } else {
      this.at.copyWithin(0, from, from + live);
      this.n.copyWithin(0, from, from + live);
    }
    this.base = this.start;
  }
}
