// When probes run, so that many routes never make one burst of upstream calls: each model has a fixed place in its
// interval (a hash of its id, the same in every process and after every restart, so an operator that takes over the
// lead keeps the rhythm), and at most `max` probes are in flight at once, whatever the number of routes.
import { createHash } from 'node:crypto';

/** Where in its interval a model is probed: a hash of its id, in [0, intervalMs). */
export function probeOffsetMs(model: string, intervalMs: number): number {
  return createHash('sha256').update(model).digest().readUInt32BE(0) % intervalMs;
}

/** The first time after `now` at the model's place in its interval (times that are offset + k * interval). */
export function nextProbeAt(now: number, offsetMs: number, intervalMs: number): number {
  const into = (((now - offsetMs) % intervalMs) + intervalMs) % intervalMs;
  return now - into + intervalMs;
}

/** At most `max` jobs at once; the others wait their turn, first come first served. */
export class ProbeSlots {
  readonly max: number;
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error('the probe concurrency must be a whole number, at least 1');
    this.max = max;
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active < this.max) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await job();
    } finally {
      // The slot passes straight to the next in line, so `active` never dips and lets a newcomer jump the queue.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Jobs waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }
}
