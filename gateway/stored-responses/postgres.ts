// Stored responses in Postgres (DATABASE_URL): table stored_responses (migration 012), the conversation sealed at
// rest with the config keyring (contract/sealed-credentials.ts), so neither an input nor an answer is readable in the
// database or its backups without SVC_CONFIG_KEY (or the pepper it is derived from). Shared by every gateway process
// on that database.
import type pg from 'pg';
import { keyFromPepper, Keyring, keyringFromEnv } from '../contract/sealed-credentials.ts';
import type { Json } from '../translate/json-read.ts';
import { migrate } from '../usage/postgres/migrate.ts';
import { createPool } from '../usage/postgres/pool.ts';
import { recordBytes, type ResponseStore, type StoredResponse } from './types.ts';

interface Row {
  id: string;
  account: string;
  previous_id: string | null;
  created_at: Date;
  expires_at: Date;
  sealed: string;
}

const aad = (account: string, id: string): string => `response/${account}/${id}`;

/** SVC_CONFIG_KEY (the first seals), else a key derived from the pepper, as the upstream credentials are sealed. */
export function responsesKeyring(env: Record<string, string | undefined>, pepper: string): Keyring {
  return keyringFromEnv(env) ?? new Keyring([keyFromPepper(pepper)]);
}

export class PostgresResponseStore implements ResponseStore {
  readonly shared = true;
  private readonly pool: pg.Pool;
  private readonly ring: Keyring;
  private readonly owned: boolean;
  private readonly onError: ((err: Error) => void) | undefined;

  constructor(pool: pg.Pool, ring: Keyring, owned = false, onError?: (err: Error) => void) {
    this.pool = pool;
    this.ring = ring;
    this.owned = owned;
    this.onError = onError;
  }

  /** A store on its own small pool, the schema migrated first (under the migrations' advisory lock). */
  static async open(url: string, ring: Keyring, onError?: (err: Error) => void): Promise<PostgresResponseStore> {
    const pool = createPool(url, { max: 4, statementTimeoutMs: 10_000, onError });
    try {
      await migrate(pool);
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    return new PostgresResponseStore(pool, ring, true, onError);
  }

  async put(r: StoredResponse, now: number): Promise<void> {
    const sealed = this.ring.seal(JSON.stringify({ input: r.input, response: r.response }), aad(r.account, r.id));
    await this.pool.query('DELETE FROM stored_responses WHERE account = $1 AND expires_at <= $2', [r.account, new Date(now)]);
    await this.pool.query(
      `INSERT INTO stored_responses (id, account, previous_id, created_at, expires_at, bytes, sealed) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO NOTHING`,
      [r.id, r.account, r.previousId, new Date(r.createdAt), new Date(r.expiresAt), recordBytes(r), sealed],
    );
  }

  async get(account: string, id: string, now: number): Promise<StoredResponse | null> {
    const { rows } = await this.pool.query<Row>(
      'SELECT id, account, previous_id, created_at, expires_at, sealed FROM stored_responses WHERE id = $1 AND account = $2 AND expires_at > $3',
      [id, account, new Date(now)],
    );
    const row = rows[0];
    return row ? this.open(row) : null;
  }

  /** A row in clear, or null when no key of this process's ring sealed it (a changed pepper, a key rotated out). */
  private open(row: Row): StoredResponse | null {
    let clear: string;
    try {
      clear = this.ring.unseal(row.sealed, aad(row.account, row.id));
    } catch (err) {
      this.onError?.(err as Error);
      return null;
    }
    const { input, response } = JSON.parse(clear) as { input: Json[]; response: Json };
    return {
      id: row.id,
      account: row.account,
      previousId: row.previous_id,
      createdAt: row.created_at.getTime(),
      expiresAt: row.expires_at.getTime(),
      input,
      response,
    };
  }

  async chain(account: string, id: string, now: number, maxBytes: number): Promise<StoredResponse[]> {
    // Each step follows previous_id within the account's live rows, and stops once the bytes read pass the bound.
    const { rows } = await this.pool.query<Row>(
      `WITH RECURSIVE c AS (
         SELECT id, account, previous_id, created_at, expires_at, sealed, 1 AS depth, bytes::bigint AS total
           FROM stored_responses WHERE id = $1 AND account = $2 AND expires_at > $3
         UNION ALL
         SELECT s.id, s.account, s.previous_id, s.created_at, s.expires_at, s.sealed, c.depth + 1, c.total + s.bytes
           FROM stored_responses s JOIN c ON s.id = c.previous_id
          WHERE s.account = $2 AND s.expires_at > $3 AND c.total <= $4
       )
       SELECT id, account, previous_id, created_at, expires_at, sealed FROM c ORDER BY depth`,
      [id, account, new Date(now), maxBytes],
    );
    const out: StoredResponse[] = [];
    for (const row of rows) {
      const r = this.open(row);
      if (!r) break;
      out.push(r);
    }
    return out;
  }

  async delete(account: string, id: string, now: number): Promise<boolean> {
    const r = await this.pool.query('DELETE FROM stored_responses WHERE id = $1 AND account = $2 RETURNING expires_at > $3 AS live', [
      id,
      account,
      new Date(now),
    ]);
    return (r.rows[0] as { live?: boolean } | undefined)?.live === true;
  }

  async usedBytes(account: string, now: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      'SELECT coalesce(sum(bytes), 0)::text AS n FROM stored_responses WHERE account = $1 AND expires_at > $2',
      [account, new Date(now)],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end();
  }
}
