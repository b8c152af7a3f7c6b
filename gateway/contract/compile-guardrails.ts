// Guardrail -> the snapshot's guardrails: the spec as gateways apply it, sorted by name, its regexes checked first.
// A Guardrail whose regex does not compile (or matches the empty string) is not served, and its status says why.
import type { GuardrailCr } from '../../crds/schema/index.ts';
import { compileRemoteChecks, isRemote } from './compile-guardrail-remote.ts';
import type { Problem } from './problem.ts';
import type { CompiledGuardrail } from './snapshot.ts';
import { accepted, inScope, type Verdict } from './verdict.ts';

export function compileGuardrails(
  crs: readonly GuardrailCr[],
  problems: Problem[],
  secrets: Map<string, Record<string, string>> = new Map(),
  scope?: string,
): { guardrails: CompiledGuardrail[]; verdicts: Record<string, Verdict> } {
  const guardrails: CompiledGuardrail[] = [];
  const verdicts: Record<string, Verdict> = {};
  for (const g of crs) {
    const name = g.metadata.name;
    const bad = badPattern(g);
    if (bad) {
      problems.push({ object: `Guardrail/${name}`, field: bad.field, message: bad.message });
      verdicts[name] = { ready: false, served: false, reason: 'InvalidPattern', message: `${bad.field}: ${bad.message}` };
      continue;
    }
    const { selector, endpoints, stages, checks } = g.spec;
    const remote = compileRemoteChecks(checks, secrets, inScope(scope));
    guardrails.push({
      name,
      selector: { plans: selector.plans ?? null, accounts: selector.accounts ?? null, keys: selector.keys ?? null, models: selector.models ?? null },
      endpoints: [...endpoints],
      stages: [...stages],
      checks: checks.flatMap((c) =>
        isRemote(c) || !c.detector
          ? []
          : [
              {
                name: c.name ?? c.detector,
                detector: c.detector,
                action: c.action,
                restore: c.restore,
                highEntropy: c.highEntropy,
                patterns: c.patterns ?? [],
                words: c.words ?? [],
              },
            ],
      ),
      ...(remote.remote.length > 0 ? { remote: remote.remote } : {}),
    });
    if (remote.missing) {
      problems.push({ object: `Guardrail/${name}`, field: 'spec.checks', message: remote.missing });
      // Served all the same: the check's calls fail without their credential and its failure mode decides.
      verdicts[name] = {
        ready: false,
        served: true,
        reason: 'MissingSecret',
        message: `${remote.missing}; its check fails until it exists (failure mode applies).`,
      };
      continue;
    }
    verdicts[name] = accepted(`${checks.length} check${checks.length === 1 ? '' : 's'} published to the gateways.`);
  }
  return { guardrails, verdicts };
}

function badPattern(g: GuardrailCr): { field: string; message: string } | null {
  for (const [i, c] of g.spec.checks.entries()) {
    for (const [j, p] of (c.patterns ?? []).entries()) {
      const problem = regexProblem(p.pattern);
      if (problem) return { field: `spec.checks[${i}].patterns[${j}].pattern`, message: problem };
    }
  }
  return null;
}

/** A Guardrail's regex must compile (Unicode mode, as gateways run it) and must not match the empty string. */
export function regexProblem(pattern: string): string | null {
  try {
    return new RegExp(pattern, 'u').test('') ? 'matches the empty string' : null;
  } catch (err) {
    return (err as Error).message;
  }
}
