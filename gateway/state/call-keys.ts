// The KEYS of the admit and settle scripts for one account's key, in the scripts' order, built once and kept: every
// call used to rebuild the account's sixteen key names and the window's two, then order them, twice. Names are pure
// functions of the prefix, the account and the key (gateway/contract/redis-keys.ts), so a kept list never goes stale.
import type { RedisKeys } from '../contract/redis-keys.ts';
import { SCRIPTS } from './scripts.ts';

export interface CallKeys {
  /** The account's acct hash (where a replica's acknowledgement is asked for). */
  acct: string;
  admit: readonly string[];
  settle: readonly string[];
}

/** Lists kept at most; past that the cache starts over (a process serving more keys than this rebuilds some). */
const MAX_KEPT = 10_000;

export class CallKeyCache {
  private readonly k: RedisKeys;
  private readonly byAccount = new Map<string, Map<string, CallKeys>>();
  private kept = 0;

  constructor(k: RedisKeys) {
    this.k = k;
  }

  of(account: string, key: string): CallKeys {
    let ofAccount = this.byAccount.get(account);
    const hit = ofAccount?.get(key);
    if (hit) return hit;
    if (this.kept >= MAX_KEPT) {
      this.byAccount.clear();
      this.kept = 0;
      ofAccount = undefined;
    }
    if (!ofAccount) this.byAccount.set(account, (ofAccount = new Map()));
    const a = this.k.account(account);
    const w = this.k.window(account, key);
    const made: CallKeys = {
      acct: a.acct,
      admit: SCRIPTS.admit.keyList({
        acct: a.acct,
        revoked: a.revoked,
        holds: a.holds,
        holdrec: a.holdrec,
        spend: a.spend,
        held: a.held,
        calls: w.calls,
        tpmn: w.tpmn,
        keyexp: a.keyexp,
      }),
      settle: SCRIPTS.settle.keyList({
        acct: a.acct,
        holds: a.holds,
        holdrec: a.holdrec,
        held: a.held,
        spend: a.spend,
        settled: a.settled,
        tpmn: w.tpmn,
        usage: a.usage,
        calls: w.calls,
      }),
    };
    ofAccount.set(key, made);
    this.kept++;
    return made;
  }
}
