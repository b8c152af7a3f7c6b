// One back-off for every cloud identity (Azure Entra ID, Google, AWS): after a credential could not be obtained,
// calls of that credential fail over at once with the same failure instead of each asking the identity provider
// again, so a wrong client id or a failing metadata server sees one request per hold, not one per call. The hold
// starts at FIRST_HOLD_MS and doubles with each failure in a row up to MAX_HOLD_MS; a success ends it.

export const FIRST_HOLD_MS = 5_000;
export const MAX_HOLD_MS = 60_000;

/** The hold after the n-th failure in a row (n >= 1). */
export function holdAfter(failures: number): number {
  return Math.min(MAX_HOLD_MS, FIRST_HOLD_MS * 2 ** Math.min(failures - 1, 16));
}

/** The back-off of one credential. */
export class CredentialBackoff<E> {
  private failures = 0;
  private until = 0;
  private error: E | null = null;

  /** The failure to answer with at `now` (ms), or null when the credential may be asked for. */
  held(now: number): E | null {
    return this.error !== null && now < this.until ? this.error : null;
  }

  failed(error: E, now: number): void {
    this.failures++;
    this.until = now + holdAfter(this.failures);
    this.error = error;
  }

  succeeded(): void {
    this.failures = 0;
    this.until = 0;
    this.error = null;
  }
}

/** Back-offs by credential id, bounded in number (the ids come from configuration, but a store must never grow). */
export class CredentialBackoffs<K, E> {
  private readonly map = new Map<K, CredentialBackoff<E>>();
  private readonly max: number;

  constructor(max = 256) {
    this.max = max;
  }

  of(id: K): CredentialBackoff<E> {
    let b = this.map.get(id);
    if (!b) {
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as K);
      b = new CredentialBackoff<E>();
      this.map.set(id, b);
    }
    return b;
  }
}
