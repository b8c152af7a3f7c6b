// The Redis store: limits and money exact across any number of gateway replicas. One Lua script (one round trip)
// admits a call, one settles it; every key a script touches is in the account's hash slot, so Redis Cluster works.
//
// Key names: gateway/contract/redis-keys.ts (the whole layout, documented there). Scripts: scripts.ts.
// Usage stream format (the exporter reads it with a consumer group): one entry per call (a lease flush: one entry of
// several events, `v` "2" and `events` a JSON array, lua/lease.lua), fields
//   v      "1" (format version)
//   event  JSON of UsageEvent (gateway/usage/event.ts): eventId (unique, made at admission), createdAt, account,
//          apiKey (name), costNano and feeNano (integers, nano-USD), tokens, status, ...
// Settled calls are appended by settle.lua in the same atomic step that charges them (ledger spent == sum of
// costNano of the stream's entries); refused calls by record(). Streams are not capped by default (the exporter trims
// below what Postgres committed); streamMaxLen > 0 sets a MAXLEN ~ safety cap that can drop unexported events.
// Failure policy: short command timeouts, no offline queue, no resend; any Redis error on the request path, and a
// Redis that lost its money state (money-guard.ts), is 503 store_unavailable with retry-after (fail closed).
import { canonicalJson } from '../contract/canonical-json.ts';
import { ConfigWriter } from './config-writer.ts';
import { redisKeys, type RedisKeys } from '../contract/redis-keys.ts';
import { sealSnapshot, type Keyring } from '../contract/sealed-credentials.ts';
import { isExpired } from '../contract/key-expiry.ts';
import { keyRecord, type KeyRecord, type Snapshot } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { UsageEvent } from '../usage/event.ts';
import { REFUSALS, toDecision, type Refusal } from './admission.ts';
import { int } from './lua-script.ts';
import { SCRIPTS } from './scripts.ts';
import { RedisCacheStore, type CacheStore } from './response-cache.ts';
import { RedisMcpSessions, type McpSessionStore } from './mcp-sessions.ts';
import { connectRedis, type RedisClient, type RedisConnection } from './redis-connect.ts';
import { SettleRetries } from './settle-retries.ts';
import type { MoneyWatch } from './money-guard.ts';
import { WriteBatch } from './write-batch.ts';
import { CallKeyCache } from './call-keys.ts';
import { Leases, type LeaseOptions } from './leases.ts';
import { batchLineParts } from './redis-batch-lines.ts';
import { LeaseRunner } from './redis-lease-runner.ts';
import { RedisReads } from './redis-reads.ts';
import type { ScriptContext } from './redis-script-context.ts';
import { ReplicaAck } from './replica-ack.ts';
import { rateLimitedWarn } from './rate-limited-warn.ts';
import {
  checkAmount,
  DEFAULT_HOLD_TTL_MS,
  monthOf,
  SETTLED_MEMORY_MS,
  settledAt,
  type AccountView,
  type AdmitDecision,
  type AdmitRequest,
  type FoundKey,
  type Hold,
  type PartSettle,
  type Ledger,
  type MonthSpend,
  type Settlement,
  type Store,
  type StoreAdmin,
  type StoreTiming,
} from './store.ts';

export interface RedisStoreOptions extends StoreTiming, RedisConnection {
  /** One URL, or with `cluster` comma-separated Cluster seed nodes (gateway/state/redis-connect.ts). */
  url: string;
  /** Prefix of every key (default "svc"); tests use one per file so runs can share a server. */
  prefix?: string;
  /** Longest wait for one Redis command before the call fails with 503 (default 1000 ms). */
  commandTimeoutMs?: number;
  /** retry-after sent with 503 store_unavailable (default 2 s). */
  retryAfterSec?: number;
  streamMaxLen?: number;
  /**
   * Replicas that must acknowledge each admission and settlement (WAIT after the script; 0 = asynchronous replication,
   * the default). With 1, a failover cannot lose an answered call's hold or charge: an admission not acknowledged in
   * time answers 503 (its hold expires), a settlement not acknowledged is retried (it is idempotent).
   */
  waitReplicas?: number;
  /** Longest WAIT for those acknowledgements (default 100 ms). */
  waitTimeoutMs?: number;
  /** Seals upstream credentials in every snapshot written to Redis (gateway/contract/sealed-credentials.ts). */
  keyring?: Keyring | null;
  onWarning?: (message: string, err?: unknown) => void;
  /** Leased admission (SVC_ADMISSION_LEASES, gateway/state/leases.ts); absent: one script per call, as always. */
  leases?: LeaseOptions | null;
}

export { accountKeys } from '../contract/redis-keys.ts';

export class RedisStore implements Store, StoreAdmin {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly responseCache: CacheStore;
  readonly mcpSessions: McpSessionStore;
  private readonly k: RedisKeys;
  private readonly holdTtlMs: number;
  private readonly retryAfterSec: number;
  private readonly streamMaxLen: number;
  private readonly warn: (message: string, err?: unknown) => void;
  private readonly retries: SettleRetries;
  private readonly batch: WriteBatch;
  private readonly config: ConfigWriter;
  private readonly keyring: Keyring | null;
  private readonly ack: ReplicaAck;
  private readonly runner: LeaseRunner;
  private readonly reads: RedisReads;
  private readonly callKeys: CallKeyCache;
  /** Tells whether this Redis lost its money state (gateway/state/money-guard.ts); null: nobody watches (tools). */
  private watch: MoneyWatch | null = null;
  /** Admission leases, when on (gateway/state/leases.ts). */
  readonly leases: Leases | null;

  private constructor(redis: RedisClient, opts: RedisStoreOptions) {
    this.redis = redis;
    this.responseCache = new RedisCacheStore(redis, opts.prefix ?? 'svc');
    this.mcpSessions = new RedisMcpSessions(redis, opts.prefix ?? 'svc');
    this.batch = new WriteBatch(redis);
    this.config = new ConfigWriter(redis, redisKeys(opts.prefix ?? 'svc'));
    this.prefix = opts.prefix ?? 'svc';
    this.k = redisKeys(this.prefix);
    this.callKeys = new CallKeyCache(this.k);
    this.holdTtlMs = opts.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
    this.retryAfterSec = opts.retryAfterSec ?? 2;
    this.streamMaxLen = opts.streamMaxLen ?? 0;
    this.keyring = opts.keyring ?? null;
    this.ack = new ReplicaAck(redis, opts.waitReplicas ?? 0, opts.waitTimeoutMs ?? 100);
    this.warn = rateLimitedWarn(opts.onWarning ?? (() => {}));
    const c: ScriptContext = {
      redis,
      k: this.k,
      batch: this.batch,
      streamMaxLen: this.streamMaxLen,
      holdTtlMs: this.holdTtlMs,
      guard: (what, op) => this.guard(what, op),
      ack: this.ack,
    };
    this.runner = new LeaseRunner(c);
    this.reads = new RedisReads(c);
    this.parts = batchLineParts(c);
    // A settle that failed is retried (it is idempotent) until its hold would have expired anyway.
    this.retries = new SettleRetries((h, s) => this.runSettle(h, s), this.holdTtlMs, this.warn);
    this.leases = opts.leases
      ? new Leases(
          {
            run: (account, key, batch, now) => this.runner.run(account, key, batch, now),
            admit: (req) => this.admitPerCall(req),
            settle: (hold, s) => this.settlePerCall(hold, s),
            holdTtlMs: this.holdTtlMs,
            warn: this.warn,
          },
          opts.leases,
        )
      : null;
  }

  /** Connects (failing fast if Redis is unreachable) and returns the store. */
  static async connect(opts: RedisStoreOptions): Promise<RedisStore> {
    const made: { store?: RedisStore } = {};
    const redis = await connectRedis(
      opts,
      {
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        commandTimeout: opts.commandTimeoutMs ?? 1000,
        connectTimeout: Math.max(2000, opts.commandTimeoutMs ?? 1000),
        retryDelayMs: (attempt) => Math.min(100 * attempt, 1000),
      },
      (err) => made.store?.warn('Redis connection error', err),
    );
    made.store = new RedisStore(redis, opts);
    return made.store;
  }

  /** From now on an unknown key on a Redis that lost its data answers 503, not 401 (its record is gone too). */
  watchMoney(watch: MoneyWatch): void {
    this.watch = watch;
  }

  /**
   * The snapshot's accounts, credits and key records, in slices of a few hundred per round trip
   * (gateway/state/config-writer.ts says what each step keeps true). The copy the exporter reads is written first.
   */
  async applyConfig(snapshot: Snapshot, keys: KeyRecord[]): Promise<void> {
    // A key's limits, expiry or revocation may change: this process's leases stop at once and go back once written.
    void this.leases?.releaseAll();
    await this.redis.set(this.k.appliedSnapshot, canonicalJson(this.seal(snapshot)));
    await this.config.write(snapshot, keys);
    await this.leases?.releaseAll();
    if (this.leases) await this.runner.revokedEnded(keys);
  }

  /**
   * Writes one key record (the config's, or one made in the console, which stays out of the config's key set): its
   * revocation and expiry in the account's slot first, where admit reads them, then the record lookups read.
   */
  async publishKey(key: KeyRecord): Promise<void> {
    void this.leases?.releaseAll();
    await this.config.keys([key], false);
    await this.leases?.releaseAll();
    if (this.leases) await this.runner.revokedEnded([key]);
  }

  /** The snapshot as it may be written to Redis: upstream credentials sealed (unchanged without a keyring). */
  seal(snapshot: Snapshot): Snapshot {
    return this.keyring ? sealSnapshot(snapshot, this.keyring) : snapshot;
  }

  /**
   * Revokes for good: first in the account's set (every admit refuses it from then on, cached record or not), then
   * on the record (every lookup refuses it). A key unknown yet leaves a revoked tombstone.
   */
  async revoke(hash: string): Promise<void> {
    void this.leases?.releaseAll();
    const record = this.k.key(hash);
    const raw = await this.redis.hget(record, 'record');
    const rec = raw ? keyRecord.parse(JSON.parse(raw)) : null;
    if (rec) await this.redis.sadd(this.k.account(rec.account).revoked, hash);
    await SCRIPTS.revokeKey.run(this.redis, { record }, {});
    await this.redis.sadd(this.k.keys, hash);
    await this.leases?.releaseAll();
    if (rec) await this.runner.ended(rec.account, rec.name, hash);
  }

  async findKey(hash: string, again = true): Promise<FoundKey | null> {
    this.batch.join();
    const reply = await this.guard('findKey', () => SCRIPTS.findKey.run(this.redis, { record: this.k.key(hash) }, {}));
    const [raw, revoked, sec, usec] = Array.isArray(reply) ? (reply as unknown[]) : [];
    if (typeof raw !== 'string' || raw === '') {
      // An unknown key, or lost records (503: SDKs do not retry a 401); a rebuild done meanwhile: look once more.
      if (!this.watch) return null;
      if (await this.guard('findKey', () => (this.watch as MoneyWatch).missing(this.k.key(hash)))) throw this.unavailable();
      return again ? this.findKey(hash, false) : null;
    }
    const record = keyRecord.parse(JSON.parse(raw));
    const serverNow = int(sec) * 1000 + Math.floor(int(usec) / 1000);
    return { ...record, revoked: revoked === '1', expired: isExpired(record.expiresAt, serverNow), clockOffsetMs: serverNow - Date.now() };
  }

  admit(req: AdmitRequest): Promise<AdmitDecision> {
    // A hold of its own length (a batch's) is never taken from a lease: leases last seconds.
    return this.leases && req.holdTtlMs === undefined ? this.admitLeased(this.leases, req) : this.admitPerCall(req);
  }

  readonly parts: PartSettle;

  private async admitLeased(leases: Leases, req: AdmitRequest): Promise<AdmitDecision> {
    checkAmount('tokens', req.tokens);
    checkAmount('holdNano', req.holdNano);
    return leases.admit(req);
  }

  private async admitPerCall(req: AdmitRequest): Promise<AdmitDecision> {
    const keys = this.callKeys.of(req.account.name, req.key.name);
    const month = monthOf(req.now);
    const k = req.key;
    checkAmount('tokens', req.tokens);
    checkAmount('holdNano', req.holdNano);
    this.batch.join();
    const reply = await this.guard('admit', () =>
      SCRIPTS.admit.runListed(this.redis, keys.admit, {
        id: req.eventId,
        keyHash: k.hash,
        keyName: k.name,
        now: req.now,
        month,
        rpm: k.rpm ?? -1,
        tpm: k.tpm ?? -1,
        budget: k.monthlyBudgetNano ?? -1,
        tokens: req.tokens,
        holdNano: req.holdNano,
        deadline: req.now + (req.holdTtlMs ?? this.holdTtlMs),
        keyRevoked: k.revoked ? '1' : '0',
      }),
    );
    const [verdict, waitMs, leftNano] = Array.isArray(reply) ? reply : [];
    if (verdict === 'ok') {
      // No replica to wait for (the default): no WAIT, and no promise to wait on either.
      if (this.ack.replicas > 0 && !(await this.guard('admit', () => this.ack.ok(keys.acct)))) {
        this.warn('An admission was not acknowledged by a replica in time; answering 503 (its hold expires)');
        throw this.unavailable();
      }
      return { ok: true, hold: { id: req.eventId, account: req.account.name, key: k.name, tokens: req.tokens, holdNano: req.holdNano, month } };
    }
    if (!REFUSALS.includes(verdict as Refusal)) throw new GatewayError('internal_error', 'The state store gave an unexpected answer.');
    return toDecision(req, verdict as Refusal, int(waitMs), int(leftNano));
  }

  settle(hold: Hold, s: Settlement): Promise<void> {
    return hold.lease !== undefined && this.leases ? this.settleLeased(this.leases, hold, s) : this.settlePerCall(hold, s);
  }

  private async settleLeased(leases: Leases, hold: Hold, s: Settlement): Promise<void> {
    checkAmount('costNano', s.costNano);
    checkAmount('feeNano', s.event.feeNano);
    checkAmount('tokens', s.tokens);
    return leases.settle(hold, s);
  }

  private async settlePerCall(hold: Hold, s: Settlement): Promise<void> {
    // Checked here, not only in runSettle: a settle that can never be valid is refused, not retried.
    checkAmount('costNano', s.costNano);
    checkAmount('feeNano', s.event.feeNano);
    checkAmount('tokens', s.tokens);
    try {
      await this.runSettle(hold, s);
    } catch (err) {
      if (isUnready(err)) this.watch?.unready();
      this.retries.add(hold, s, err);
    }
  }

  /** Calls whose settle is waiting for Redis to come back. */
  pendingSettles = (): number => this.retries.size;

  private async runSettle(hold: Hold, s: Settlement): Promise<void> {
    const keys = this.callKeys.of(hold.account, hold.key);
    this.batch.join();
    await SCRIPTS.settle.runListed(this.redis, keys.settle, {
      id: hold.id,
      keyName: hold.key,
      month: hold.month,
      costNano: s.costNano,
      feeNano: s.event.feeNano,
      tokens: s.tokens,
      now: settledAt(s),
      settledKeepMs: this.holdTtlMs + SETTLED_MEMORY_MS,
      eventJson: JSON.stringify(s.event),
      streamMaxLen: this.streamMaxLen,
      freeSlot: s.freeSlot ? '1' : '0',
      cacheHit: s.event.cache === 'hit' ? '1' : '0',
      savedNano: s.event.cache === 'hit' ? (s.event.cacheSavedNano ?? 0) : 0,
    });
    // Not on a replica yet: run it again later (idempotent), so a failover cannot lose the charge.
    if (this.ack.replicas > 0 && !(await this.ack.ok(keys.acct))) throw new Error(`settle of ${hold.id} not acknowledged ${this.ack.what}`);
  }

  async record(event: UsageEvent): Promise<void> {
    const stream = this.k.account(event.account).usage;
    const cap = this.streamMaxLen > 0 ? ['MAXLEN', '~', this.streamMaxLen] : [];
    await this.guard('record', () => this.redis.xadd(stream, ...cap, '*', 'v', '1', 'event', JSON.stringify(event)));
  }

  view = (account: string, keyName: string, now: number): Promise<AccountView> => this.reads.view(account, keyName, now);
  ledger = (account: string): Promise<Ledger> => this.reads.ledger(account);
  /** One account's money for status (the operator's spend refresh): redis-reads.ts. */
  monthSpend = (account: string, keyNames: readonly string[], month: string): Promise<MonthSpend> => this.reads.monthSpend(account, keyNames, month);
  /** Usage events of one account's stream, oldest first (tests and tools; the exporter uses a consumer group). */
  usageEvents = (account: string): Promise<UsageEvent[]> => this.reads.usageEvents(account);

  async close(): Promise<void> {
    // A graceful drain: every leased settle written and every lease given back before the retries' last round.
    await this.leases?.drain().catch((err: unknown) => this.warn('Giving admission leases back failed', err));
    await this.retries.flush();
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  /** Fail closed: every Redis failure on the request path is a 503 with retry-after, never a hang. */
  private async guard<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (isUnready(err)) this.watch?.unready();
      this.warn(isUnready(err) ? `Redis ${what}: the money state is being rebuilt; answering 503` : `Redis ${what} failed; answering 503`, err);
      throw this.unavailable();
    }
  }

  private unavailable(): GatewayError {
    return new GatewayError('store_unavailable', 'The gateway cannot reach its state store right now; retry shortly.', { retryAfterSec: this.retryAfterSec });
  }
}

/** A money script refused: the account's money state is not in Redis (lib.lua UNREADY). */
function isUnready(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('SVCUNREADY');
}
