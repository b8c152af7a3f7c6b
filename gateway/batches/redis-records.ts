// Files and batches in Redis (the gateway's shared store), per account in the account's hash slot: a hash of file
// records, one string per file's content (expiring with the file's retention), a hash of batch records, and one set
// of batches not settled yet, which any gateway's job may take (claim: SET NX PX, one worker at a time).
import { redisKeys, type RedisKeys } from '../contract/redis-keys.ts';
import type { RedisClient } from '../state/redis-connect.ts';
import { pageOf, type BatchRecords, type ListPage, type OpenBatch } from './records.ts';
import type { BatchRecord, FileRecord } from './types.ts';

export class RedisBatchRecords implements BatchRecords {
  private readonly redis: RedisClient;
  private readonly k: RedisKeys;

  constructor(redis: RedisClient, prefix = 'svc') {
    this.redis = redis;
    this.k = redisKeys(prefix);
  }

  async putFile(f: FileRecord, content: Buffer): Promise<void> {
    const r = this.k.batchRecords(f.account);
    const at = f.expiresAt * 1000;
    // The content first: a record never names content that is not there.
    await this.redis.set(r.content(f.id), content, 'PXAT', at);
    await this.redis.hset(r.files, f.id, JSON.stringify(f));
  }

  async file(account: string, id: string, now: number): Promise<FileRecord | null> {
    const raw = await this.redis.hget(this.k.batchRecords(account).files, id);
    if (!raw) return null;
    const f = JSON.parse(raw) as FileRecord;
    if (f.expiresAt * 1000 > now) return f;
    await this.deleteFile(account, id);
    return null;
  }

  async content(account: string, id: string, now: number): Promise<Buffer | null> {
    if (!(await this.file(account, id, now))) return null;
    return this.redis.getBuffer(this.k.batchRecords(account).content(id));
  }

  async files(account: string, page: ListPage, now: number): Promise<FileRecord[]> {
    const all = Object.values(await this.redis.hgetall(this.k.batchRecords(account).files)).map((v) => JSON.parse(v) as FileRecord);
    // Records past their retention go as they are listed (their content expired in Redis on its own).
    const gone = all.filter((f) => f.expiresAt * 1000 <= now).map((f) => f.id);
    if (gone.length > 0) await this.redis.hdel(this.k.batchRecords(account).files, ...gone);
    return pageOf(
      all.filter((f) => f.expiresAt * 1000 > now),
      page,
    );
  }

  async deleteFile(account: string, id: string): Promise<boolean> {
    const r = this.k.batchRecords(account);
    await this.redis.del(r.content(id));
    return (await this.redis.hdel(r.files, id)) === 1;
  }

  async putBatch(b: BatchRecord): Promise<void> {
    await this.redis.hset(this.k.batchRecords(b.account).batches, b.id, JSON.stringify(b));
    const member = JSON.stringify([b.account, b.id]);
    if (b.settled) await this.redis.srem(this.k.batchesOpen, member);
    else await this.redis.sadd(this.k.batchesOpen, member);
  }

  async batch(account: string, id: string): Promise<BatchRecord | null> {
    const raw = await this.redis.hget(this.k.batchRecords(account).batches, id);
    return raw ? (JSON.parse(raw) as BatchRecord) : null;
  }

  async batches(account: string, page: ListPage): Promise<BatchRecord[]> {
    const all = Object.values(await this.redis.hgetall(this.k.batchRecords(account).batches)).map((v) => JSON.parse(v) as BatchRecord);
    return pageOf(all, page);
  }

  async open(): Promise<OpenBatch[]> {
    const members = await this.redis.smembers(this.k.batchesOpen);
    return members.map((m) => {
      const [account, id] = JSON.parse(m) as [string, string];
      return { account, id };
    });
  }

  async claim(b: OpenBatch, owner: string, ms: number): Promise<boolean> {
    const key = this.k.batchRecords(b.account).claim(b.id);
    if ((await this.redis.set(key, owner, 'PX', ms, 'NX')) === 'OK') return true;
    // Ours already: extended.
    if ((await this.redis.get(key)) !== owner) return false;
    await this.redis.pexpire(key, ms);
    return true;
  }

  async unclaim(b: OpenBatch, owner: string): Promise<void> {
    const key = this.k.batchRecords(b.account).claim(b.id);
    if ((await this.redis.get(key)) === owner) await this.redis.del(key);
  }

  async close(): Promise<void> {}
}
