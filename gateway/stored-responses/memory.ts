// Stored responses in this process's memory (no DATABASE_URL): bounded by the per-account byte bound (checked before
// each store: true call, stored-step.ts) and by the retention (expired records are never read and are dropped on the
// account's next write). Lost on restart, and seen only by this process.
import { recordBytes, type ResponseStore, type StoredResponse } from './types.ts';

interface Kept {
  r: StoredResponse;
  bytes: number;
}

export class MemoryResponseStore implements ResponseStore {
  readonly shared = false;
  private readonly accounts = new Map<string, Map<string, Kept>>();

  private live(account: string, now: number): Map<string, Kept> {
    let m = this.accounts.get(account);
    if (!m) {
      m = new Map();
      this.accounts.set(account, m);
    }
    for (const [id, k] of m) if (k.r.expiresAt <= now) m.delete(id);
    return m;
  }

  async put(r: StoredResponse, now: number): Promise<void> {
    this.live(r.account, now).set(r.id, { r, bytes: recordBytes(r) });
  }

  async get(account: string, id: string, now: number): Promise<StoredResponse | null> {
    const k = this.accounts.get(account)?.get(id);
    return k && k.r.expiresAt > now ? k.r : null;
  }

  async delete(account: string, id: string, now: number): Promise<boolean> {
    const m = this.accounts.get(account);
    const k = m?.get(id);
    if (!m || !k) return false;
    m.delete(id);
    return k.r.expiresAt > now;
  }

  async usedBytes(account: string, now: number): Promise<number> {
    let n = 0;
    for (const k of this.live(account, now).values()) n += k.bytes;
    return n;
  }

  async close(): Promise<void> {
    this.accounts.clear();
  }
}
