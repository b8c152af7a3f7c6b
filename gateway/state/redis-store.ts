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
import { entryEvents } from '../usage/event-schema.ts';
import { REFUSALS, toDecision, type Refusal } from './admission.ts';
import { int } from './lua-script.ts';
import { SCRIPTS } from './scripts.ts';
import { RedisCacheStore, type CacheStore } from './response-cache.ts';
import { RedisMcpSessions, type McpSessionStore } from './mcp-sessions.ts';
import { connectRedis, type RedisClient, type RedisConnection } from './redis-connect.ts';
import { SettleRetries } from './settle-retries.ts';
import type { MoneyWatch } from './money-guard.ts';
import { WriteBatch } from './write-batch.ts';
import { LEASE_LIFE_MS, Leases, type LeaseBatch, type LeaseOptions, type LeaseReply } from './leases.ts';
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
  type LineSettlement,
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
  private readonly waitReplicas: number;
  private readonly waitTimeoutMs: number;
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
    this.holdTtlMs = opts.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
    this.retryAfterSec = opts.retryAfterSec ?? 2;
    this.streamMaxLen = opts.streamMaxLen ?? 0;
    this.keyring = opts.keyring ?? null;
    this.waitReplicas = opts.waitReplicas ?? 0;
    this.waitTimeoutMs = opts.waitTimeoutMs ?? 100;
    this.warn = rateLimitedWarn(opts.onWarning ?? (() => {}));
    // A settle that failed is retried (it is idempotent) until its hold would have expired anyway.
    this.retries = new SettleRetries((h, s) => this.runSettle(h, s), this.holdTtlMs, this.warn);
    this.leases = opts.leases
      ? new Leases(
          {
            run: (account, key, batch, now) => this.runLease(account, key, batch, now),
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
    if (this.leases) await this.revokedLeasesEnded(keys);
  }

  /** With leases on, a key revoked by config is refused everywhere once this returns, as by revoke(). */
  private async revokedLeasesEnded(keys: readonly KeyRecord[]): Promise<void> {
    await Promise.all(keys.filter((k) => k.revoked).map((k) => this.leasesEnded(k.account, k.name, k.hash)));
  }

  /**
   * Writes one key record (the config's, or one made in the console, which stays out of the config's key set): its
   * revocation and expiry in the account's slot first, where admit reads them, then the record lookups read.
   */
  async publishKey(key: KeyRecord): Promise<void> {
    void this.leases?.releaseAll();
    await this.config.keys([key], false);
    await this.leases?.releaseAll();
    if (this.leases) await this.revokedLeasesEnded([key]);
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
    if (rec) await this.leasesEnded(rec.account, rec.name, hash);
  }

  /**
   * Returns once no gateway process holds an admission lease on the key (each gives it back at its next flush, which
   * hears of the revocation, and none admits from one past its end): from then on every call takes the per-call path
   * and is refused. At most LEASE_LIFE_MS (and one EXISTS when no process leases at all).
   */
  private async leasesEnded(account: string, key: string, hash: string): Promise<void> {
    if ((await this.redis.exists(this.k.account(account).leases)) === 0) return;
    const end = performance.now() + LEASE_LIFE_MS + 50;
    while ((await this.runLease(account, key, { h: hash }, Date.now())).live > 0 && performance.now() < end) {
      await new Promise((r) => setTimeout(r, 10));
    }
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

  readonly parts: PartSettle = {
    settleLine: (hold, s) => this.settleLine(hold, s),
    release: (hold, now) => this.releaseHold(hold, now),
  };

  private async settleLine(hold: Hold, s: LineSettlement): Promise<void> {
    checkAmount('costNano', s.costNano);
    checkAmount('lineHoldNano', s.lineHoldNano);
    checkAmount('feeNano', s.event.feeNano);
    const a = this.k.account(hold.account);
    this.batch.join();
    await this.guard('settle', () =>
      SCRIPTS.settleLine.run(
        this.redis,
        { acct: a.acct, holds: a.holds, holdrec: a.holdrec, held: a.held, spend: a.spend, usage: a.usage, lines: this.k.batchLines(hold.account, hold.id) },
        {
          id: hold.id,
          lineId: s.lineId,
          keyName: hold.key,
          month: hold.month,
          lineHoldNano: s.lineHoldNano,
          costNano: s.costNano,
          feeNano: s.event.feeNano,
          now: settledAt({ costNano: s.costNano, tokens: 0, event: s.event }),
          eventJson: JSON.stringify(s.event),
          streamMaxLen: this.streamMaxLen,
        },
      ),
    );
  }

  private async releaseHold(hold: Hold, now: number): Promise<void> {
    const a = this.k.account(hold.account);
    await this.guard('settle', () =>
      SCRIPTS.releaseHold.run(
        this.redis,
        { acct: a.acct, holds: a.holds, holdrec: a.holdrec, held: a.held, lines: this.k.batchLines(hold.account, hold.id) },
        { id: hold.id, now },
      ),
    );
  }

  private async admitLeased(leases: Leases, req: AdmitRequest): Promise<AdmitDecision> {
    checkAmount('tokens', req.tokens);
    checkAmount('holdNano', req.holdNano);
    return leases.admit(req);
  }

  private async admitPerCall(req: AdmitRequest): Promise<AdmitDecision> {
    const a = this.k.account(req.account.name);
    const w = this.k.window(req.account.name, req.key.name);
    const month = monthOf(req.now);
    const k = req.key;
    checkAmount('tokens', req.tokens);
    checkAmount('holdNano', req.holdNano);
    this.batch.join();
    const reply = await this.guard('admit', () =>
      SCRIPTS.admit.run(
        this.redis,
        {
          acct: a.acct,
          revoked: a.revoked,
          holds: a.holds,
          holdrec: a.holdrec,
          spend: a.spend,
          held: a.held,
          calls: w.calls,
          tpmn: w.tpmn,
          keyexp: a.keyexp,
        },
        {
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
        },
      ),
    );
    const [verdict, waitMs, leftNano] = Array.isArray(reply) ? reply : [];
    if (verdict === 'ok') {
      if (!(await this.guard('admit', () => this.replicated(a.acct)))) {
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
    const a = this.k.account(hold.account);
    const w = this.k.window(hold.account, hold.key);
    this.batch.join();
    await SCRIPTS.settle.run(
      this.redis,
      { acct: a.acct, holds: a.holds, holdrec: a.holdrec, held: a.held, spend: a.spend, settled: a.settled, tpmn: w.tpmn, usage: a.usage, calls: w.calls },
      {
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
      },
    );
    // Not on a replica yet: run it again later (idempotent), so a failover cannot lose the charge.
    if (!(await this.replicated(a.acct)))
      throw new Error(`settle of ${hold.id} not acknowledged by ${this.waitReplicas} replica(s) in ${this.waitTimeoutMs} ms`);
  }

  /** One run of lease.lua for a key (gateway/state/leases.ts): settles, a release, a grant, a request for leases back. */
  private async runLease(account: string, key: string, batch: LeaseBatch, now: number): Promise<LeaseReply> {
    const a = this.k.account(account);
    const w = this.k.window(account, key);
    this.batch.join();
    const reply = await this.guard('lease', () =>
      SCRIPTS.lease.run(
        this.redis,
        {
          acct: a.acct,
          revoked: a.revoked,
          holds: a.holds,
          holdrec: a.holdrec,
          held: a.held,
          spend: a.spend,
          settled: a.settled,
          usage: a.usage,
          leases: a.leases,
          calls: w.calls,
          tpmn: w.tpmn,
          keyexp: a.keyexp,
        },
        {
          now,
          settledKeepMs: this.holdTtlMs + SETTLED_MEMORY_MS,
          streamMaxLen: this.streamMaxLen,
          // Each settle's usage event goes as an argument of its own, not escaped again inside the batch's JSON.
          batchJson: JSON.stringify({ ...batch, s: batch.s?.map(({ ev: _ev, ...rest }) => rest), k: key }),
          '...events': batch.s?.map((x) => x.ev) ?? [],
        },
      ),
    );
    const [verdict, slots, tokens, nano, demand, revoked, live] = Array.isArray(reply) ? (reply as unknown[]) : [];
    // With waitReplicas, settled and released calls count as written once a replica has them (as runSettle).
    const acked = await this.guard('lease', () => this.replicated(a.acct));
    if (!acked && (batch.s?.length || batch.r))
      throw new Error(`leased settles not acknowledged by ${this.waitReplicas} replica(s) in ${this.waitTimeoutMs} ms`);
    return {
      // A grant no replica has could vanish in a failover: not used (Redis reclaims it at its deadline).
      granted: verdict === 'lease' && acked ? { slots: int(slots), tokens: int(tokens), nano: int(nano) } : null,
      demand: int(demand) === 1,
      revoked: int(revoked) === 1,
      live: int(live),
    };
  }

  /** WAIT on the connection of `key`'s node (its slot in a Cluster): true when enough replicas have the writes so far. */
  private async replicated(key: string): Promise<boolean> {
    if (this.waitReplicas <= 0) return true;
    const res = await this.redis.pipeline().exists(key).wait(this.waitReplicas, this.waitTimeoutMs).exec();
    const [err, acked] = res?.[1] ?? [];
    if (err) throw err;
    return Number(acked) >= this.waitReplicas;
  }

  async record(event: UsageEvent): Promise<void> {
    const stream = this.k.account(event.account).usage;
    const cap = this.streamMaxLen > 0 ? ['MAXLEN', '~', this.streamMaxLen] : [];
    await this.guard('record', () => this.redis.xadd(stream, ...cap, '*', 'v', '1', 'event', JSON.stringify(event)));
  }

  async view(account: string, keyName: string, now: number): Promise<AccountView> {
    const a = this.k.account(account);
    const r = await this.guard('view', () => SCRIPTS.view.run(this.redis, { acct: a.acct, spend: a.spend }, { month: monthOf(now), keyName }));
    const [credited, spent, keySpend, acctSpend, keyHits, keySaved] = Array.isArray(r) ? r.map(int) : [];
    return {
      balanceNano: (credited ?? 0) - (spent ?? 0),
      keyMonthSpendNano: keySpend ?? 0,
      accountMonthSpendNano: acctSpend ?? 0,
      keyMonthCacheHits: keyHits ?? 0,
      keyMonthCacheSavedNano: keySaved ?? 0,
    };
  }

  async ledger(account: string): Promise<Ledger> {
    const a = this.k.account(account);
    const r = await SCRIPTS.ledger.run(this.redis, { acct: a.acct, holds: a.holds }, {});
    const [creditedNano = 0, spentNano = 0, feeNano = 0, heldNano = 0, openHolds = 0] = Array.isArray(r) ? r.map(int) : [];
    return { creditedNano, spentNano, feeNano, heldNano, openHolds };
  }

  /**
   * One account's money for status (the operator's spend refresh): credited and spent as the ledger holds them, and
   * this month's spend of the account and of each named key. Two reads in one pipeline (one round trip; both keys in
   * the account's hash slot, so Redis Cluster takes it too).
   */
  async monthSpend(account: string, keyNames: readonly string[], month: string): Promise<MonthSpend> {
    const a = this.k.account(account);
    const replies = await this.redis
      .pipeline()
      .hmget(a.acct, 'credited', 'spent')
      .hmget(a.spend, month, ...keyNames.map((k) => `${month}|${k}`))
      .exec();
    const values = (replies ?? []).map(([err, v]) => {
      if (err) throw err;
      return (v as Array<string | null>).map((x) => int(x ?? '0'));
    });
    const [credited = 0, spent = 0] = values[0] ?? [];
    const [accountMonth = 0, ...keys] = values[1] ?? [];
    return {
      creditedNano: credited,
      spentNano: spent,
      accountMonthNano: accountMonth,
      keyMonthNano: Object.fromEntries(keyNames.map((k, i) => [k, keys[i] ?? 0])),
    };
  }

  /** Usage events of one account's stream, oldest first (tests and tools; the exporter uses a consumer group). */
  async usageEvents(account: string): Promise<UsageEvent[]> {
    const entries = await this.redis.xrange(this.k.account(account).usage, '-', '+');
    return entries.flatMap(([, fields]) => entryEvents(fields) as UsageEvent[]);
  }

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
