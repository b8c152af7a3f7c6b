// Stored responses for the routes and the call step: reads that see this process's writes still in flight (a GET
// right after the answer finds the record even while its Postgres insert runs), the previous_response_id chain
// walked and bounded, and writes that never fail a call (a failed write is logged; the answer was already served).
// An account's stored bytes are read from the store at most every USED_TTL_MS and kept up to date here in between,
// so a store: true call does not wait for a sum over the account's rows (in Postgres) before its hold.
import { GatewayError } from '../errors/catalog.ts';
import type { CallLog } from '../pipeline/call-log.ts';
import { mintedAt } from './items.ts';
import { recordBytes, type ResponseStore, type StoredResponse, type StoredResponsesSettings } from './types.ts';

/** How long after minting an id a read on another process waits for its write to show in a shared store. */
export const WRITE_LAG_MS = 2_000;
const LAG_POLL_MS = 25;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How old the count of an account's stored bytes may be (another process's writes show within this). */
export const USED_TTL_MS = 5_000;

export class StoredResponses {
  readonly store: ResponseStore;
  readonly settings: StoredResponsesSettings;
  private readonly log: CallLog;
  private readonly pending = new Map<string, Promise<void>>();
  private readonly used = new Map<string, { bytes: number; at: number }>();

  constructor(store: ResponseStore, settings: StoredResponsesSettings, log: CallLog) {
    this.store = store;
    this.settings = settings;
    this.log = log;
  }

  /** Starts the write of a record; a read of its id waits for it. Resolves when written (never rejects). */
  save(r: StoredResponse, now: number): Promise<void> {
    const write = this.store.put(r, now).then(
      () => {
        const u = this.used.get(r.account);
        if (u) u.bytes += recordBytes(r);
      },
      (err: unknown) => this.log.warn({ err, response: r.id, account: r.account }, 'A stored response was not written; it will not be found'),
    );
    const tracked = write.finally(() => this.pending.delete(r.id));
    this.pending.set(r.id, tracked);
    return tracked;
  }

  async get(account: string, id: string, now: number): Promise<StoredResponse | null> {
    await this.pending.get(id);
    const r = await unavailableOnError(this.store.get(account, id, now), this.log);
    return r ?? this.lagging(account, id, now);
  }

  /**
   * A response another process minted less than WRITE_LAG_MS ago may still be on its way to the shared store (its
   * write starts once its answer has left): looked for again until then. Any other id is not found at once.
   */
  private async lagging(account: string, id: string, now: number): Promise<StoredResponse | null> {
    const minted = mintedAt(id);
    if (!this.store.shared || minted === null) return null;
    const until = Math.min(minted + WRITE_LAG_MS, Date.now() + WRITE_LAG_MS);
    while (Date.now() < until) {
      await sleep(LAG_POLL_MS);
      const r = await unavailableOnError(this.store.get(account, id, now), this.log);
      if (r) return r;
    }
    return null;
  }

  /** The record, or 404 not_found in the caller's dialect (the same for another account's, a deleted or unknown id). */
  async mustGet(account: string, id: string, now: number): Promise<StoredResponse> {
    const r = await this.get(account, id, now);
    if (!r) throw notFound(id);
    return r;
  }

  async delete(account: string, id: string, now: number): Promise<void> {
    await this.pending.get(id);
    this.used.delete(account);
    if (await unavailableOnError(this.store.delete(account, id, now), this.log)) return;
    // Just minted by another process and not written yet: deleted once it shows.
    if (!(await this.lagging(account, id, now)) || !(await unavailableOnError(this.store.delete(account, id, now), this.log))) throw notFound(id);
  }

  /** The chain's records the store reads in one round trip (Postgres), by id; empty for a store without it. */
  private async prefetch(account: string, id: string, now: number): Promise<Map<string, StoredResponse>> {
    if (!this.store.chain) return new Map();
    await this.pending.get(id);
    const found = await unavailableOnError(this.store.chain(account, id, now, this.settings.accountBytes), this.log);
    return new Map(found.map((r) => [r.id, r]));
  }

  /** Bytes the account's stored responses hold, as of at most USED_TTL_MS ago (plus this process's writes since). */
  async usedBytes(account: string, now: number): Promise<number> {
    const u = this.used.get(account);
    if (u && now - u.at >= 0 && now - u.at < USED_TTL_MS) return u.bytes;
    const bytes = await unavailableOnError(this.store.usedBytes(account, now), this.log);
    this.used.set(account, { bytes, at: now });
    return bytes;
  }

  /**
   * The chain that ends at `id`, oldest first: 400 when a response of it is gone (never stored, deleted, expired or
   * another account's), or when its items pass the bound (the rebuilt input would be larger than an account may keep).
   */
  async chain(account: string, id: string, now: number): Promise<StoredResponse[]> {
    const out: StoredResponse[] = [];
    let bytes = 0;
    const seen = new Set<string>();
    const fetched = await this.prefetch(account, id, now);
    for (let at: string | null = id; at !== null;) {
      if (seen.has(at)) break;
      seen.add(at);
      const r: StoredResponse | null = fetched.get(at) ?? (await this.get(account, at, now));
      if (!r) {
        const which =
          at === id ? `Previous response with id '${id}' not found.` : `Response '${at}' in the chain of previous_response_id '${id}' was deleted or expired.`;
        throw new GatewayError('previous_response_not_found', which, { param: 'previous_response_id' });
      }
      bytes += recordBytes(r);
      if (bytes > this.settings.accountBytes) throw tooLarge(this.settings.accountBytes);
      out.push(r);
      at = r.previousId;
    }
    return out.reverse();
  }
}

/** A store that fails (Postgres down) answers 503 with retry-after, as a Redis outage does, never a 500. */
async function unavailableOnError<T>(p: Promise<T>, log: CallLog): Promise<T> {
  try {
    return await p;
  } catch (err) {
    log.warn({ err }, 'Stored responses: the store failed');
    throw new GatewayError('store_unavailable', 'Stored responses cannot be read right now; retry shortly.', { retryAfterSec: 1 });
  }
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `Response with id '${id}' not found.`);
}

export function tooLarge(bound: number): GatewayError {
  return new GatewayError(
    'conversation_too_large',
    `The conversation rebuilt from previous_response_id is over ${bound} bytes (SVC_RESPONSES_ACCOUNT_MAX_BYTES): start a new one, or send the input yourself with store: false.`,
    { param: 'previous_response_id' },
  );
}
