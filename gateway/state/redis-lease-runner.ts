// The Redis side of leased admission (gateway/state/leases.ts): one run of lua/lease.lua for a key (settles, a
// release, a grant, a request for leases back), and the wait a revocation makes until no process leases the key.
import type { KeyRecord } from '../contract/snapshot.ts';
import { int } from './lua-script.ts';
import type { ScriptContext } from './redis-script-context.ts';
import { SCRIPTS } from './scripts.ts';
import { SETTLED_MEMORY_MS } from './store.ts';
import { LEASE_LIFE_MS, type LeaseBatch, type LeaseReply } from './leases.ts';

export class LeaseRunner {
  private readonly c: ScriptContext;

  constructor(c: ScriptContext) {
    this.c = c;
  }

  /** One run of lease.lua for a key: settles, a release, a grant, a request for leases back. */
  async run(account: string, key: string, batch: LeaseBatch, now: number): Promise<LeaseReply> {
    const { k, redis } = this.c;
    const a = k.account(account);
    const w = k.window(account, key);
    this.c.batch.join();
    const reply = await this.c.guard('lease', () =>
      SCRIPTS.lease.run(
        redis,
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
          leaseends: a.leaseEnds,
        },
        {
          now,
          settledKeepMs: this.c.holdTtlMs + SETTLED_MEMORY_MS,
          streamMaxLen: this.c.streamMaxLen,
          // Each settle's usage event goes as an argument of its own, not escaped again inside the batch's JSON.
          batchJson: JSON.stringify({ ...batch, s: batch.s?.map(({ ev: _ev, ...rest }) => rest), k: key }),
          '...events': batch.s?.map((x) => x.ev) ?? [],
        },
      ),
    );
    const [verdict, slots, tokens, nano, demand, revoked, live] = Array.isArray(reply) ? (reply as unknown[]) : [];
    // With waitReplicas, settled and released calls count as written once a replica has them (as the per-call settle).
    const acked = await this.c.guard('lease', () => this.c.ack.ok(a.acct));
    if (!acked && (batch.s?.length || batch.r)) throw new Error(`leased settles not acknowledged ${this.c.ack.what}`);
    return {
      // A grant no replica has could vanish in a failover: not used (Redis reclaims it at its deadline).
      granted: verdict === 'lease' && acked ? { slots: int(slots), tokens: int(tokens), nano: int(nano) } : null,
      demand: int(demand) === 1,
      revoked: int(revoked) === 1,
      live: int(live),
    };
  }

  /**
   * Returns once no gateway process holds an admission lease on the key (each gives it back at its next flush, which
   * hears of the revocation, and none admits from one past its end): from then on every call takes the per-call path
   * and is refused. At most LEASE_LIFE_MS (and one EXISTS when no process leases at all).
   */
  async ended(account: string, key: string, hash: string): Promise<void> {
    if ((await this.c.redis.exists(this.c.k.account(account).leases)) === 0) return;
    const end = performance.now() + LEASE_LIFE_MS + 50;
    while ((await this.run(account, key, { h: hash }, Date.now())).live > 0 && performance.now() < end) {
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** A key revoked by config is refused everywhere once this returns, as after revoke(). */
  async revokedEnded(keys: readonly KeyRecord[]): Promise<void> {
    await Promise.all(keys.filter((k) => k.revoked).map((k) => this.ended(k.account, k.name, k.hash)));
  }
}
