// The store suite's fixtures (store-suite.ts): an account, a snapshot, a key record, an admission request, a usage
// event and a hold, each with defaults a test overrides.
import { feeShareNano } from '../contract/money.ts';
import type { CompiledAccount, KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { UsageEvent } from '../usage/event.ts';
import type { AdmitDecision, AdmitRequest, Hold } from './store.ts';

export function account(over: Partial<CompiledAccount> = {}): CompiledAccount {
  return { name: 'acme', plan: 'builder', trialCreditNano: 1_000_000, credits: [], ...over };
}

export function snapshot(accounts: CompiledAccount[]): Snapshot {
  return {
    schema: 1,
    version: 'test',
    plans: { builder: { name: 'builder', tier: 2, anthropicEndpoint: true, models: null, rpm: null, tpm: null } },
    accounts: Object.fromEntries(accounts.map((a) => [a.name, a])),
    models: {},
  };
}

export function keyRec(over: Partial<KeyRecord> = {}): KeyRecord {
  return {
    hash: 'ab'.repeat(32),
    name: 'k1',
    display: 'sk-svc-…abcd',
    account: 'acme',
    monthlyBudgetNano: null,
    rpm: null,
    tpm: null,
    models: null,
    revoked: false,
    ...over,
  };
}

let seq = 0;
export function request(key: KeyRecord, acct: CompiledAccount, now: number, over: Partial<AdmitRequest> = {}): AdmitRequest {
  return { eventId: `call-${++seq}-${now}`, key, account: acct, tokens: 10, holdNano: 1000, now, ...over };
}

export function usage(hold: Hold, cost: number, now: number, status = 200): UsageEvent {
  return {
    eventId: hold.id,
    createdAt: new Date(now).toISOString(),
    account: hold.account,
    apiKey: hold.key,
    taskType: null,
    endpoint: 'chat.completions',
    requestedModel: 'm',
    servedModel: 'm',
    upstream: 't',
    fallback: false,
    fallbackReason: null,
    status,
    errorCode: null,
    stream: false,
    inputTokens: 1,
    outputTokens: 1,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: cost,
    feeNano: feeShareNano(cost),
    latencyMs: 0,
    ttftMs: 0,
  };
}

export function held(d: AdmitDecision): Hold {
  if (!d.ok) throw new Error(`expected admission, got ${d.code}: ${d.message}`);
  return d.hold;
}
