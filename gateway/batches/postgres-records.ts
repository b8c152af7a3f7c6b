// Files and batches in Postgres (DATABASE_URL; tables of migration 016): every process on the database sees them and
// they outlive Redis and restarts. A file's bytes are kept in chunks of at most 1 MiB, each sealed with the config
// keyring (contract/sealed-credentials.ts sealBytes) and bound to its account, file and place, so no request line is
// in the database in clear and none can be read as another account's. Reads stream chunk by chunk. Claims (one
// process works on a batch at a time) stay where they are quick and expire by themselves: Redis, or this process.
import { Readable } from 'node:stream';
import type pg from 'pg';
import { GatewayError } from '../errors/catalog.ts';
import { sealBytes, unsealBytes, type Keyring } from '../contract/sealed-credentials.ts';
import { migrate } from '../usage/postgres/migrate.ts';
import { createPool } from '../usage/postgres/pool.ts';
import type { BatchRecords, ListPage, OpenBatch } from './records.ts';
import type { BatchRecord, FileRecord } from './types.ts';

export const CHUNK_BYTES = 1024 * 1024;
/** Rows deleted per statement by the sweep, so no statement holds many locks for long. */
const SWEEP_ROWS = 500;

type Claims = Pick<BatchRecords, 'claim' | 'unclaim'>;

interface FileRow {
  account: string;
  id: string;
  purpose: FileRecord['purpose'];
  filename: string;
  bytes: string;
  created_at: string;
  expires_at: Date;
  model: string | null;
}

const FILE_COLUMNS = 'account, id, purpose, filename, bytes::text AS bytes, created_at::text AS created_at, expires_at, model';
const chunkAad = (account: string, id: string, seq: number): string => `file/${account}/${id}/${seq}`;

function fileOf(r: FileRow): FileRecord {
  return {
    id: r.id,
    account: r.account,
    purpose: r.purpose,
    filename: r.filename,
    bytes: Number(r.bytes),
    createdAt: Number(r.created_at),
    expiresAt: Math.floor(r.expires_at.getTime() / 1000),
    ...(r.model === null ? {} : { model: r.model }),
  };
}

function unavailable(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = new GatewayError('store_unavailable', 'Files and batches cannot be read or kept right now; retry shortly.', { retryAfterSec: 1 });
  // For the logs (the job's warnings); the answer carries the message above only.
  e.cause = err;
  return e;
}

export class PostgresBatchRecords implements BatchRecords {
  private readonly pool: pg.Pool;
  private readonly ring: Keyring;
  private readonly claims: Claims;
  private readonly owned: boolean;
  private readonly onError: ((err: Error) => void) | undefined;

  constructor(pool: pg.Pool, ring: Keyring, claims: Claims, owned = false, onError?: (err: Error) => void) {
    this.pool = pool;
    this.ring = ring;
    this.claims = claims;
    this.owned = owned;
    this.onError = onError;
  }

  /** Records on their own small pool, the schema migrated first (under the migrations' advisory lock). */
  static async open(url: string, ring: Keyring, claims: Claims, onError?: (err: Error) => void): Promise<PostgresBatchRecords> {
    const pool = createPool(url, { max: 4, statementTimeoutMs: 60_000, onError });
    try {
      await migrate(pool);
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    return new PostgresBatchRecords(pool, ring, claims, true, onError);
  }

  /** One statement; Postgres away (or refusing) is a 503 with retry-after to the caller, never a 500. */
  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The record and its sealed chunks in one transaction: a file is there whole or not at all (written again: replaced). */
  async putFile(f: FileRecord, content: Buffer): Promise<void> {
    const client = await this.pool.connect().catch((err: unknown) => {
      throw unavailable(err);
    });
    try {
      await client.query('BEGIN');
      await client.query('DELETE FROM batch_files WHERE account = $1 AND id = $2', [f.account, f.id]);
      await client.query(
        'INSERT INTO batch_files (account, id, purpose, filename, bytes, created_at, expires_at, model) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        [f.account, f.id, f.purpose, f.filename, f.bytes, f.createdAt, new Date(f.expiresAt * 1000), f.model ?? null],
      );
      for (let seq = 0, at = 0; at < content.length || seq === 0; seq += 1, at += CHUNK_BYTES) {
        const sealed = sealBytes(this.ring, content.subarray(at, at + CHUNK_BYTES), chunkAad(f.account, f.id, seq));
        await client.query('INSERT INTO batch_file_chunks (account, file_id, seq, sealed) VALUES ($1, $2, $3, $4)', [f.account, f.id, seq, sealed]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw unavailable(err);
    } finally {
      client.release();
    }
  }

  async file(account: string, id: string, now: number): Promise<FileRecord | null> {
    const { rows } = await this.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM batch_files WHERE account = $1 AND id = $2 AND expires_at > $3`, [
      account,
      id,
      new Date(now),
    ]);
    return rows[0] ? fileOf(rows[0]) : null;
  }

  async content(account: string, id: string, now: number): Promise<Buffer | null> {
    const chunks = await this.chunks(account, id, now);
    if (!chunks) return null;
    const parts: Buffer[] = [];
    for await (const c of chunks) parts.push(c);
    return Buffer.concat(parts);
  }

  /** The file's bytes as a stream of its chunks (one chunk in memory at a time); null when there is no such file. */
  async contentStream(account: string, id: string, now: number): Promise<Readable | null> {
    const chunks = await this.chunks(account, id, now);
    return chunks ? Readable.from(chunks, { objectMode: false }) : null;
  }

  private async chunks(account: string, id: string, now: number): Promise<AsyncGenerator<Buffer> | null> {
    const f = await this.file(account, id, now);
    if (!f) return null;
    const { rows } = await this.query<{ n: number }>('SELECT count(*)::int AS n FROM batch_file_chunks WHERE account = $1 AND file_id = $2', [account, id]);
    const count = rows[0]?.n ?? 0;
    const chunk = async (seq: number): Promise<Buffer> => {
      const r = await this.query<{ sealed: Buffer }>('SELECT sealed FROM batch_file_chunks WHERE account = $1 AND file_id = $2 AND seq = $3', [
        account,
        id,
        seq,
      ]);
      const row = r.rows[0];
      // Deleted while it was read (the owner, or the sweep): the read ends with an error, never a short file.
      if (!row) throw new Error(`the file ${id} was deleted while it was read`);
      return unsealBytes(this.ring, row.sealed, chunkAad(account, id, seq));
    };
    // The first chunk read now: a file sealed with a key no longer in the ring (a changed pepper, a key rotated out)
    // is not found, as a stored response is, rather than a stream that fails once its answer has begun.
    let first: Buffer;
    try {
      first = count > 0 ? await chunk(0) : Buffer.alloc(0);
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      this.onError?.(err as Error);
      return null;
    }
    return (async function* read(): AsyncGenerator<Buffer> {
      yield first;
      for (let seq = 1; seq < count; seq += 1) yield await chunk(seq);
    })();
  }

  async files(account: string, page: ListPage, now: number): Promise<FileRecord[]> {
    const { rows } = await this.query<FileRow>(
      `SELECT ${FILE_COLUMNS} FROM batch_files f
        WHERE account = $1 AND expires_at > $2
          AND ($3::text IS NULL OR NOT EXISTS (SELECT 1 FROM batch_files a WHERE a.account = $1 AND a.id = $3)
               OR (created_at, id) < (SELECT a.created_at, a.id FROM batch_files a WHERE a.account = $1 AND a.id = $3))
        ORDER BY created_at DESC, id DESC LIMIT $4`,
      [account, new Date(now), page.after ?? null, page.limit],
    );
    return rows.map(fileOf);
  }

  async deleteFile(account: string, id: string): Promise<boolean> {
    const r = await this.query('DELETE FROM batch_files WHERE account = $1 AND id = $2', [account, id]);
    return r.rowCount === 1;
  }

  /** Deletes every file past its retention (their chunks with them); how many went. */
  async sweep(now: number): Promise<number> {
    let total = 0;
    for (;;) {
      const r = await this.query(
        `DELETE FROM batch_files WHERE (account, id) IN (SELECT account, id FROM batch_files WHERE expires_at <= $1 LIMIT ${SWEEP_ROWS})`,
        [new Date(now)],
      );
      total += r.rowCount ?? 0;
      if ((r.rowCount ?? 0) < SWEEP_ROWS) return total;
    }
  }

  async putBatch(b: BatchRecord): Promise<void> {
    await this.query(
      `INSERT INTO batch_records (account, id, created_at, settled, record) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account, id) DO UPDATE SET settled = EXCLUDED.settled, record = EXCLUDED.record`,
      [b.account, b.id, b.createdAt, b.settled, JSON.stringify(b)],
    );
  }

  async batch(account: string, id: string): Promise<BatchRecord | null> {
    const { rows } = await this.query<{ record: BatchRecord }>('SELECT record FROM batch_records WHERE account = $1 AND id = $2', [account, id]);
    return rows[0]?.record ?? null;
  }

  async batches(account: string, page: ListPage): Promise<BatchRecord[]> {
    const { rows } = await this.query<{ record: BatchRecord }>(
      `SELECT record FROM batch_records
        WHERE account = $1
          AND ($2::text IS NULL OR NOT EXISTS (SELECT 1 FROM batch_records a WHERE a.account = $1 AND a.id = $2)
               OR (created_at, id) < (SELECT a.created_at, a.id FROM batch_records a WHERE a.account = $1 AND a.id = $2))
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [account, page.after ?? null, page.limit],
    );
    return rows.map((r) => r.record);
  }

  async open(): Promise<OpenBatch[]> {
    const { rows } = await this.query<OpenBatch>('SELECT account, id FROM batch_records WHERE NOT settled ORDER BY created_at, id', []);
    return rows;
  }

  claim(b: OpenBatch, owner: string, ms: number): Promise<boolean> {
    return this.claims.claim(b, owner, ms);
  }

  unclaim(b: OpenBatch, owner: string): Promise<void> {
    return this.claims.unclaim(b, owner);
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end();
  }
}
