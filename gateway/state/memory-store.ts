// In-memory store for one standalone process: the same decisions as the Redis store, exact by construction
// (JavaScript runs one admission at a time).
import type { KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { UsageSink } from '../usage/event.ts';
import { decideAdmission, type LimitState } from './admission.ts';
import { monthOf, type AccountView, type AdmitDecision, type AdmitRequest, type Hold, type Settlement, type Store } from './store.ts';

interface AccountState {
  creditedNano: number;
  spentNano: number;
  heldNano: number;
  appliedCredits: Set<string>;
  trialGranted: boolean;
  monthSpend: Map<string, number>;
}

interface KeyState {
  requests: number[];
  tokens: Array<{ at: number; n: number; id: string }>;
  monthSpend: Map<string, number>;
  monthHeld: Map<string, number>;
}

export class MemoryStore implements Store {
  private keys = new Map<string, KeyRecord>();
  private readonly revoked = new Set<string>();
  private readonly accounts = new Map<string, AccountState>();
  private readonly keyState = new Map<string, KeyState>();
  private readonly sink: UsageSink;

  constructor(sink: UsageSink) {
    this.sink = sink;
  }

  async applyConfig(snapshot: Snapshot, keys: KeyRecord[]): Promise<void> {
    for (const a of Object.values(snapshot.accounts)) {
      const st = this.account(a.name);
      if (!st.trialGranted) {
        st.trialGranted = true;
        st.creditedNano += a.trialCreditNano;
      }
      for (const c of a.credits) {
        if (st.appliedCredits.has(c.id)) continue;
        st.appliedCredits.add(c.id);
        st.creditedNano += c.amountNano;
      }
    }
    // Revocation is irreversible: once seen revoked, a key stays revoked whatever later config says.
    for (const k of keys) if (k.revoked) this.revoked.add(k.hash);
    this.keys = new Map(keys.map((k) => [k.hash, { ...k, revoked: k.revoked || this.revoked.has(k.hash) }]));
  }

  async findKey(hash: string): Promise<KeyRecord | null> {
    return this.keys.get(hash) ?? null;
  }

  async admit(req: AdmitRequest): Promise<AdmitDecision> {
    const acct = this.account(req.account.name);
    const ks = this.key(req.key.name);
    const month = monthOf(req.now);
    ks.requests = ks.requests.filter((t) => t > req.now - 60_000);
    ks.tokens = ks.tokens.filter((t) => t.at > req.now - 60_000);
    const state: LimitState = {
      revoked: this.revoked.has(req.key.hash) || req.key.revoked,
      requestTimes: ks.requests,
      tokenEntries: ks.tokens,
      keyMonthCommittedNano: (ks.monthSpend.get(month) ?? 0) + (ks.monthHeld.get(month) ?? 0),
      availableNano: acct.creditedNano - acct.spentNano - acct.heldNano,
    };
    const decision = decideAdmission(req, state);
    if (!decision.ok) return decision;
    ks.requests.push(req.now);
    ks.tokens.push({ at: req.now, n: req.tokens, id: req.eventId });
    ks.monthHeld.set(month, (ks.monthHeld.get(month) ?? 0) + req.holdNano);
    acct.heldNano += req.holdNano;
    const hold: Hold = { id: req.eventId, account: req.account.name, key: req.key.name, tokens: req.tokens, holdNano: req.holdNano, month };
    return { ok: true, hold };
  }

  async settle(hold: Hold, s: Settlement): Promise<void> {
    const acct = this.account(hold.account);
    const ks = this.key(hold.key);
    acct.heldNano -= hold.holdNano;
    acct.spentNano += s.costNano;
    acct.monthSpend.set(hold.month, (acct.monthSpend.get(hold.month) ?? 0) + s.costNano);
    ks.monthHeld.set(hold.month, (ks.monthHeld.get(hold.month) ?? 0) - hold.holdNano);
    ks.monthSpend.set(hold.month, (ks.monthSpend.get(hold.month) ?? 0) + s.costNano);
    const entry = ks.tokens.find((t) => t.id === hold.id);
    if (entry) entry.n = s.tokens;
    this.sink.emit(s.event);
  }

  async record(event: Parameters<UsageSink['emit']>[0]): Promise<void> {
    this.sink.emit(event);
  }

  async view(account: string, keyName: string, now: number): Promise<AccountView> {
    const acct = this.account(account);
    const month = monthOf(now);
    return {
      balanceNano: acct.creditedNano - acct.spentNano,
      keyMonthSpendNano: this.key(keyName).monthSpend.get(month) ?? 0,
      accountMonthSpendNano: acct.monthSpend.get(month) ?? 0,
    };
  }

  async close(): Promise<void> {}

  private account(name: string): AccountState {
    let st = this.accounts.get(name);
    if (!st) {
      st = { creditedNano: 0, spentNano: 0, heldNano: 0, appliedCredits: new Set(), trialGranted: false, monthSpend: new Map() };
      this.accounts.set(name, st);
    }
    return st;
  }

  private key(name: string): KeyState {
    let st = this.keyState.get(name);
    if (!st) {
      st = { requests: [], tokens: [], monthSpend: new Map(), monthHeld: new Map() };
      this.keyState.set(name, st);
    }
    return st;
  }
}
