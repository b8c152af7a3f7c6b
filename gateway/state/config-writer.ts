// Writes the config's accounts and key records to Redis in slices of BATCH, each step of a slice one round trip
// (gateway/state/pipelined.ts), so 50,000 keys take a few hundred round trips instead of a few hundred thousand.
// What one command at a time guaranteed still holds, because each slice keeps the same order of steps:
//   - idempotent: every write sets a value or adds to a set; the same config twice changes nothing;
//   - credits once by id, the trial once ever: apply-account.lua decides that per account, atomically;
//   - a revoked key stays revoked: its HMAC joins the account's revoked set (which admit checks) before its record is
//     written, publish-key.lua never clears the record's flag, and remove-key.lua keeps revoked records;
//   - a key's expiry is in place before its record, so an expiry moved into the past stops the key at once;
//   - the caller moves `current` to the snapshot only after this returns (gateway/state/operator-state.ts), so no
//     gateway sees a snapshot whose key records are not all written.
import type { RedisKeys } from '../contract/redis-keys.ts';
import type { KeyRecord, Snapshot } from '../contract/snapshot.ts';
import { int } from './lua-script.ts';
import { sendTogether, slices, type Command, type ScriptCall } from './pipelined.ts';
import type { RedisClient } from './redis-connect.ts';
import { SCRIPTS } from './scripts.ts';

/** Keys (or accounts) a round trip carries: a few hundred KB of commands, well inside a command timeout. */
export const BATCH = 500;

export class ConfigWriter {
  private readonly redis: RedisClient;
  private readonly k: RedisKeys;

  constructor(redis: RedisClient, k: RedisKeys) {
    this.redis = redis;
    this.k = k;
  }

  /** Accounts and credits, then key records, then the removal of keys gone from the config (revoked ones stay). */
  async write(snapshot: Snapshot, keys: readonly KeyRecord[]): Promise<void> {
    for (const slice of slices(Object.values(snapshot.accounts), BATCH)) await this.accounts(slice);
    for (const slice of slices(keys, BATCH)) await this.keys(slice, true);
    await this.removeGone(new Set(keys.map((key) => key.hash)));
  }

  private async accounts(accounts: ReadonlyArray<Snapshot['accounts'][string]>): Promise<void> {
    const streams = accounts.map((a) => this.k.account(a.name).usage);
    const apply = accounts.map((a) => {
      const k = this.k.account(a.name);
      return SCRIPTS.applyAccount.call(
        this.redis,
        { acct: k.acct, credits: k.credits },
        { trialNano: a.trialCreditNano, '...creditPairs': a.credits.flatMap((c) => [c.id, c.amountNano]) },
      );
    });
    await sendTogether(this.redis, [['sadd', this.k.usageStreams, ...streams], ...apply]);
  }

  /**
   * Revocations and expiries where admit reads them, then the records, then the revocations records still held.
   * `inConfig`: the keys join the config's key set (keys gone from it are removed later); a key made in the console
   * stays out of it, or the next config would remove it.
   */
  async keys(keys: readonly KeyRecord[], inConfig: boolean): Promise<void> {
    await sendTogether(this.redis, this.admitSide(keys));
    const records: ScriptCall[] = keys.map((key) =>
      SCRIPTS.publishKey.call(this.redis, { record: this.k.key(key.hash) }, { recordJson: JSON.stringify(key), revoked: key.revoked ? '1' : '0' }),
    );
    const stored = await sendTogether(this.redis, records);
    // A record revoked earlier (a stale writer sent revoked: false): the admit side learns it too.
    const stillRevoked = keys.filter((key, i) => stored[i] === '1' && !key.revoked);
    const after: Command[] = inConfig ? [['sadd', this.k.keys, ...keys.map((key) => key.hash)]] : [];
    for (const [account, list] of byAccount(stillRevoked)) after.push(['sadd', this.k.account(account).revoked, ...list.map((key) => key.hash)]);
    await sendTogether(this.redis, after);
  }

  /** Per account (one slot): the revoked HMACs added, the expiries set, the expiries no longer wanted deleted. */
  private admitSide(keys: readonly KeyRecord[]): Command[] {
    const out: Command[] = [];
    for (const [account, list] of byAccount(keys)) {
      const a = this.k.account(account);
      const revoked = list.filter((key) => key.revoked).map((key) => key.hash);
      const expiring = list.flatMap((key) => (typeof key.expiresAt === 'number' ? [key.hash, key.expiresAt] : []));
      const lasting = list.filter((key) => typeof key.expiresAt !== 'number').map((key) => key.hash);
      if (revoked.length > 0) out.push(['sadd', a.revoked, ...revoked]);
      if (expiring.length > 0) out.push(['hset', a.keyexp, ...expiring]);
      if (lasting.length > 0) out.push(['hdel', a.keyexp, ...lasting]);
    }
    return out;
  }

  private async removeGone(current: ReadonlySet<string>): Promise<void> {
    const gone = (await this.redis.smembers(this.k.keys)).filter((hash) => !current.has(hash));
    for (const slice of slices(gone, BATCH)) {
      const removed = await sendTogether(
        this.redis,
        slice.map((hash) => SCRIPTS.removeKey.call(this.redis, { record: this.k.key(hash) }, {})),
      );
      const done = slice.filter((_, i) => int(removed[i]) === 1);
      if (done.length > 0) await this.redis.srem(this.k.keys, ...done);
    }
  }
}

function byAccount(keys: readonly KeyRecord[]): Map<string, KeyRecord[]> {
  const out = new Map<string, KeyRecord[]>();
  for (const key of keys) {
    const list = out.get(key.account);
    if (list) list.push(key);
    else out.set(key.account, [key]);
  }
  return out;
}
