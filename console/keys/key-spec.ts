// What a key is made with (the Create key form's result) and the plan's ceiling on it: the names both the form and
// every key backend use, kept apart so neither imports the other.

export interface KeySpec {
  name: string;
  monthlyBudgetNano: number | null;
  rpm: number | null;
  tpm: number | null;
  models: string[] | null;
}

export interface PlanLimits {
  rpm: number | null;
  tpm: number | null;
}
