// Failed sign-ins are limited per client address: at most `max` in a sliding window, then refused until the oldest
// failure leaves the window. Successful sign-ins do not count.
export class SignInLimit {
  private readonly failures = new Map<string, number[]>();
  private readonly max: number;
  private readonly windowMs: number;

  constructor(max = 5, windowMs = 5 * 60_000) {
    this.max = max;
    this.windowMs = windowMs;
  }

  /** Seconds to wait before another attempt from this address is looked at (0 = go ahead). */
  retryAfterSec(address: string, now: number): number {
    const recent = this.recent(address, now);
    if (recent.length < this.max) return 0;
    return Math.max(1, Math.ceil(((recent[0] as number) + this.windowMs - now) / 1000));
  }

  fail(address: string, now: number): void {
    const recent = this.recent(address, now);
    recent.push(now);
    this.failures.set(address, recent);
    if (this.failures.size > 10_000) {
      for (const [a, times] of this.failures) if ((times.at(-1) ?? 0) <= now - this.windowMs) this.failures.delete(a);
    }
  }

  private recent(address: string, now: number): number[] {
    return (this.failures.get(address) ?? []).filter((t) => t > now - this.windowMs);
  }
}
