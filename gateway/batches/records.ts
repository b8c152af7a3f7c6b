// Where files and batches are kept: per account (another account's id is simply not found), files until their
// retention ends. Memory for one process; Redis (redis-records.ts) when the gateway shares a Redis; Postgres
// (postgres-records.ts) when it has DATABASE_URL.
import type { Readable } from 'node:stream';
import type { BatchRecord, FileRecord } from './types.ts';

export interface ListPage {
  /** The id after which to list (the previous page's last). */
  after?: string;
  limit: number;
}

export interface OpenBatch {
  account: string;
  id: string;
}

export interface BatchRecords {
  putFile(f: FileRecord, content: Buffer): Promise<void>;
  file(account: string, id: string, now: number): Promise<FileRecord | null>;
  content(account: string, id: string, now: number): Promise<Buffer | null>;
  /** Newest first. */
  files(account: string, page: ListPage, now: number): Promise<FileRecord[]>;
  deleteFile(account: string, id: string): Promise<boolean>;
  putBatch(b: BatchRecord): Promise<void>;
  batch(account: string, id: string): Promise<BatchRecord | null>;
  /** Newest first. */
  batches(account: string, page: ListPage): Promise<BatchRecord[]>;
  /** Batches not settled yet (the job's work list). */
  open(): Promise<OpenBatch[]>;
  /** Takes a batch for `ms` so one process works on it at a time; false: another has it. */
  claim(b: OpenBatch, owner: string, ms: number): Promise<boolean>;
  /** Gives a claim back (a process that stops), so another takes the batch at once. */
  unclaim(b: OpenBatch, owner: string): Promise<void>;
  close(): Promise<void>;
  /** The content as a stream, read piece by piece (a large file never whole in memory); where the records can. */
  contentStream?(account: string, id: string, now: number): Promise<Readable | null>;
  /** Deletes the files past their retention (the job calls it); where expiry is not the store's own (Redis TTLs). */
  sweep?(now: number): Promise<number>;
}

/** Newest first, then the page after `after`. */
export function pageOf<T extends { id: string; createdAt: number }>(all: T[], page: ListPage): T[] {
  const sorted = [...all].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  const from = page.after === undefined ? 0 : sorted.findIndex((x) => x.id === page.after) + 1;
  return sorted.slice(from, from + page.limit);
}

export class MemoryBatchRecords implements BatchRecords {
  private readonly fileMap = new Map<string, { f: FileRecord; content: Buffer }>();
  private readonly batchMap = new Map<string, BatchRecord>();
  private readonly claims = new Map<string, { owner: string; until: number }>();

  async putFile(f: FileRecord, content: Buffer): Promise<void> {
    this.fileMap.set(`${f.account}|${f.id}`, { f, content });
  }

  private live(account: string, id: string, now: number): { f: FileRecord; content: Buffer } | null {
    const e = this.fileMap.get(`${account}|${id}`);
    if (!e) return null;
    if (e.f.expiresAt * 1000 <= now) {
      this.fileMap.delete(`${account}|${id}`);
      return null;
    }
    return e;
  }

  async file(account: string, id: string, now: number): Promise<FileRecord | null> {
    return this.live(account, id, now)?.f ?? null;
  }

  async content(account: string, id: string, now: number): Promise<Buffer | null> {
    return this.live(account, id, now)?.content ?? null;
  }

  async files(account: string, page: ListPage, now: number): Promise<FileRecord[]> {
    const mine = [...this.fileMap.values()].filter((e) => e.f.account === account && e.f.expiresAt * 1000 > now).map((e) => e.f);
    return pageOf(mine, page);
  }

  async deleteFile(account: string, id: string): Promise<boolean> {
    return this.fileMap.delete(`${account}|${id}`);
  }

  async putBatch(b: BatchRecord): Promise<void> {
    this.batchMap.set(`${b.account}|${b.id}`, structuredClone(b));
  }

  async batch(account: string, id: string): Promise<BatchRecord | null> {
    const b = this.batchMap.get(`${account}|${id}`);
    return b ? structuredClone(b) : null;
  }

  async batches(account: string, page: ListPage): Promise<BatchRecord[]> {
    return pageOf(
      [...this.batchMap.values()].filter((b) => b.account === account),
      page,
    ).map((b) => structuredClone(b));
  }

  async open(): Promise<OpenBatch[]> {
    return [...this.batchMap.values()].filter((b) => !b.settled).map((b) => ({ account: b.account, id: b.id }));
  }

  async claim(b: OpenBatch, owner: string, ms: number): Promise<boolean> {
    const k = `${b.account}|${b.id}`;
    const now = Date.now();
    const c = this.claims.get(k);
    if (c && c.until > now && c.owner !== owner) return false;
    this.claims.set(k, { owner, until: now + ms });
    return true;
  }

  async unclaim(b: OpenBatch, owner: string): Promise<void> {
    const k = `${b.account}|${b.id}`;
    if (this.claims.get(k)?.owner === owner) this.claims.delete(k);
  }

  async close(): Promise<void> {}
}
