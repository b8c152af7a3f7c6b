// A key's sliding 60-second window in memory: one entry per admitted call (time, tokens), oldest first, with the
// token total kept as it changes. Admitting, trimming and correcting a call's tokens cost O(1) amortized whatever
// the rate (a busy key holds a minute of calls: 150,000 entries at 2,500 calls/s), the same work as the Redis
// store's sorted set and running sum.
import type { WindowView } from './admission.ts';

interface Entry {
  at: number;
  n: number;
  id: string;
}

export class WindowLog implements WindowView {
  private entries: Entry[] = [];
  private head = 0;
  private readonly byId = new Map<string, Entry>();
  tokens = 0;

  get count(): number {
    return this.entries.length - this.head;
  }

  entry(i: number): Entry {
    return this.entries[this.head + i] as Entry;
  }

  /** Drops the calls admitted at or before `edge`. */
  trim(edge: number): void {
    const xs = this.entries;
    let h = this.head;
    while (h < xs.length && (xs[h] as Entry).at <= edge) {
      const e = xs[h++] as Entry;
      this.tokens -= e.n;
      this.byId.delete(e.id);
    }
    this.head = h;
    // Compact once the dropped prefix is at least half the array: amortized O(1) per entry.
    if (h > 1024 && h * 2 >= xs.length) {
      this.entries = xs.slice(h);
      this.head = 0;
    }
  }

  /** Appends in time order; a rare out-of-order time (a clock step between replicas) goes to its place. */
  add(at: number, n: number, id: string): void {
    const e: Entry = { at, n, id };
    const xs = this.entries;
    let i = xs.length;
    while (i > this.head && (xs[i - 1] as Entry).at > at) i--;
    if (i === xs.length) xs.push(e);
    else xs.splice(i, 0, e);
    this.byId.set(id, e);
    this.tokens += n;
  }

  /** The call's actual tokens once settled, if it is still in the window. */
  setTokens(id: string, n: number): void {
    const e = this.byId.get(id);
    if (!e) return;
    this.tokens += n - e.n;
    e.n = n;
  }
}
