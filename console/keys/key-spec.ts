// What a key is made with (the Create key form's result) and the plan's ceiling on it: the names both the form and
// every key backend use, kept apart so neither imports the other.
import type { KeyPolicy } from '../../gateway/contract/key-expiry.ts';
import type { SelfServicePolicy } from './self-service-policy.ts';

export interface KeySpec {
  name: string;
  monthlyBudgetNano: number | null;
  rpm: number | null;
  tpm: number | null;
  models: string[] | null;
  /** When the key expires (ms), from the form's "expires after N days"; null: never. */
  expiresAt: number | null;
}

/** What the Create form checks a key against: the plan's limits and the account's keyPolicy. */
export interface PlanLimits {
  rpm: number | null;
  tpm: number | null;
  keyPolicy: KeyPolicy | null;
  /** The Plan's and Account's spec.selfService caps together; absent when neither sets any. */
  selfService?: SelfServicePolicy;
}
