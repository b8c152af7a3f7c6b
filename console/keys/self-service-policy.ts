// The caps of self-service keys (create-own-keys without manage-keys): what a Plan and an Account set under
// spec.selfService, merged so the tighter holds, and the check of a key's settings against them. Checked on the
// server at create and rotate; the form only shows them.
import { usdWords } from '../../gateway/contract/money.ts';
import type { CompiledSelfService } from '../../gateway/contract/snapshot.ts';
import { globMatch } from '../../gateway/contract/model-match.ts';
import type { KeySpec, SelfServicePolicy } from './key-spec.ts';

export type { SelfServicePolicy } from './key-spec.ts';

export const NO_POLICY: SelfServicePolicy = { maxBudgetNano: null, modelLists: [], maxKeysPerPerson: null };

function tighter(a: number | null, b: number | undefined): number | null {
  if (b === undefined) return a;
  return a === null ? b : Math.min(a, b);
}

/** The Plan's and the Account's caps together: the lower number, and every model list. */
export function mergePolicies(...caps: Array<CompiledSelfService | undefined>): SelfServicePolicy {
  let p = NO_POLICY;
  for (const c of caps) {
    if (!c) continue;
    p = {
      maxBudgetNano: tighter(p.maxBudgetNano, c.maxBudgetNano),
      modelLists: c.models ? [...p.modelLists, c.models] : p.modelLists,
      maxKeysPerPerson: tighter(p.maxKeysPerPerson, c.maxKeysPerPerson),
    };
  }
  return p;
}

export function hasCaps(p: SelfServicePolicy): boolean {
  return p.maxBudgetNano !== null || p.modelLists.length > 0;
}

/** Whether a key's model entry is within a list: one of its entries, an id one matches, or a narrower prefix glob. */
export function withinModels(list: readonly string[], entry: string): boolean {
  return list.some((allowed) => {
    if (allowed === entry) return true;
    if (!entry.includes('*')) return globMatch(allowed, entry);
    // A glob within a glob: only `prefix*` policies, whose every id starts with the prefix.
    const star = allowed.indexOf('*');
    return star === allowed.length - 1 && entry.startsWith(allowed.slice(0, -1));
  });
}

function modelsText(p: SelfServicePolicy): string {
  return p.modelLists.map((l) => l.join(', ')).join('; and within ');
}

/** Errors by form field, worded for the person; empty when the key is within the policy. */
export function policyErrors(spec: Pick<KeySpec, 'monthlyBudgetNano' | 'models'>, p: SelfServicePolicy): Partial<Record<keyof KeySpec, string>> {
  const errors: Partial<Record<keyof KeySpec, string>> = {};
  if (p.maxBudgetNano !== null) {
    const max = `${usdWords(p.maxBudgetNano)} USD`;
    if (spec.monthlyBudgetNano === null)
      errors.monthlyBudgetNano = `Set a monthly budget of at most ${max}: the self-service policy of this account requires one.`;
    else if (spec.monthlyBudgetNano > p.maxBudgetNano)
      errors.monthlyBudgetNano = `At most ${max} a month for a key you make yourself (the self-service policy of this account).`;
  }
  if (p.modelLists.length > 0) {
    if (spec.models === null || spec.models.length === 0) {
      errors.models = `Name the models of your key, within ${modelsText(p)} (the self-service policy of this account).`;
    } else {
      const outside = spec.models.filter((m) => !p.modelLists.every((l) => withinModels(l, m)));
      if (outside.length > 0)
        errors.models = `${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} not open to keys you make yourself: choose within ${modelsText(p)}.`;
    }
  }
  return errors;
}

/** The form's hints for a self-service person, or null without caps. */
export function policyHints(p: SelfServicePolicy): { budget: string | null; models: string | null } {
  return {
    budget: p.maxBudgetNano === null ? null : `Required for your keys: at most ${usdWords(p.maxBudgetNano)} USD. Resets on the 1st (UTC).`,
    models: p.modelLists.length === 0 ? null : `Required for your keys: model ids or globs within ${modelsText(p)}, separated by commas or spaces.`,
  };
}
