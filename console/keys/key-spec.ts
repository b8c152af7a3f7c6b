// What a key is made with (the Create key form's result) and the plan's ceiling on it: the names both the form and
// every key backend use, kept apart so neither imports the other.
import type { KeyPolicy } from '../../gateway/contract/key-expiry.ts';

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

/** The caps a Plan and an Account set on the keys people make for themselves (self-service-policy.ts applies them). */
export interface SelfServicePolicy {
  /** Most monthly budget of a self-service key (nano-USD); null: no cap (a key may also have no budget). */
  maxBudgetNano: number | null;
  /** Model lists a key's models must each be within (the Plan's, the Account's); empty: no cap. */
  modelLists: string[][];
  /** Unrevoked self-service keys per person; null: the console's SVC_CONSOLE_OWN_KEYS_MAX. */
  maxKeysPerPerson: number | null;
}
