// Pure compile step: validated manifests (Secrets included) -> config snapshot + key records, and a verdict per
// object (served or not, and why). Used by the standalone gateway and by the operator, whose statuses render the
// verdicts. Problems are also returned as data, naming object and field. An object with a problem is not always
// left out: a route keeps its good targets, an account with an unknown plan stays in the snapshot (its keys cannot
// be served); see the verdicts for what is served.
import { createHash } from 'node:crypto';
import type { Account, ApiKey, GuardrailCr, IncidentCr, McpServerCr, ModelRoute, Plan, Secret } from '../../crds/schema/index.ts';
import { compileGuardrails } from './compile-guardrails.ts';
import { keySecretName, secretValues } from '../../crds/schema/index.ts';
import { REVOKE_REASON } from '../../crds/schema/key-owner.ts';
import { compileMcpServers, mcpAccessOf } from './compile-mcp.ts';
import { compileModels } from './compile-routes.ts';
import { effectiveExpiry, policyViolation } from './key-expiry.ts';
import { displayKey, hashKey, isWellFormedKey, KEY_PREFIX } from './keys.ts';
import { usdToNano } from './money.ts';
import type { CompiledSelfService, KeyRecord, Snapshot } from './snapshot.ts';
import { SNAPSHOT_SCHEMA } from './snapshot.ts';
import { canonicalJson } from './canonical-json.ts';
import type { Problem } from './problem.ts';
import { accepted, inScope, type Verdict, type Verdicts } from './verdict.ts';

export interface ManifestSet {
  plans: Plan[];
  accounts: Account[];
  apiKeys: ApiKey[];
  modelRoutes: ModelRoute[];
  secrets: Secret[];
  /** MCP servers behind /mcp (absent: none). */
  mcpServers?: McpServerCr[];
  /** Guardrails: checks on the text of calls (absent: none). */
  guardrails?: GuardrailCr[];
  /** Declared incidents (status pages only; compile ignores them). */
  incidents?: IncidentCr[];
}

export interface CompileOptions {
  pepper: string;
  /** Called for an ApiKey whose Secret holds no key (standalone: generate and print once). */
  keyFor?: (apiKey: ApiKey) => string | null;
  /** Where the objects live, named in messages about a missing one ("namespace team-a"). */
  scope?: string;
  /** hashKey under the pepper, memoized by a caller that compiles the same keys again and again (the operator). */
  hashKey?: (key: string) => string;
}

export interface CompileResult {
  snapshot: Snapshot;
  keys: KeyRecord[];
  problems: Problem[];
  /** Per object: served or not, and why. */
  verdicts: Verdicts;
}

function minLimit(a: number | undefined, ceiling: number | undefined): number | null {
  if (a === undefined) return ceiling ?? null;
  return ceiling === undefined ? a : Math.min(a, ceiling);
}

function sortByName<T extends { metadata: { name: string } }>(xs: T[]): T[] {
  return [...xs].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
}

const MALFORMED = 'sk-svc- followed by 38 base62 characters with a valid checksum';

/** The caps a Plan or Account sets on self-service keys, when it sets any (absent otherwise: the hash stays). */
function selfServiceOf(c: { maxBudgetUsd?: number; models?: string[]; maxKeysPerPerson?: number } | undefined): { selfService?: CompiledSelfService } {
  if (!c || (c.maxBudgetUsd === undefined && c.models === undefined && c.maxKeysPerPerson === undefined)) return {};
  return {
    selfService: {
      ...(c.maxBudgetUsd === undefined ? {} : { maxBudgetNano: usdToNano(c.maxBudgetUsd) }),
      ...(c.models === undefined ? {} : { models: c.models }),
      ...(c.maxKeysPerPerson === undefined ? {} : { maxKeysPerPerson: c.maxKeysPerPerson }),
    },
  };
}

/** Why, when the key says (the operator's offboarding writes it): " (offboarded: ...)". */
function revokeReason(k: ApiKey): string {
  const why = k.metadata.annotations?.[REVOKE_REASON];
  return why ? ` (${why.slice(0, 256)})` : '';
}

/** An ApiKey's verdict, most telling first: revoked, a malformed key, a missing Account or Plan, no key, its policy. */
function keyVerdict(
  k: ApiKey,
  snapshot: Omit<Snapshot, 'version'>,
  key: 'ok' | 'malformed' | 'none',
  scope: string | undefined,
  policy: string | null,
): Verdict {
  const no = (reason: string, message: string): Verdict => ({ ready: false, served: false, reason, message });
  const secretName = keySecretName(k.metadata.name, k.spec.secretName);
  const account = snapshot.accounts[k.spec.accountRef];
  if (k.spec.revoked)
    return {
      ready: true,
      served: account !== undefined && key === 'ok',
      reason: 'Revoked',
      message: `The key is revoked${revokeReason(k)}: every gateway refuses it, for good.`,
    };
  if (key === 'malformed') return no('MalformedKey', `Secret ${secretName} holds a malformed key under data key "key" (${MALFORMED}).`);
  if (!account) return no('UnknownAccount', `Account ${k.spec.accountRef} does not exist${inScope(scope)}.`);
  if (!snapshot.plans[account.plan]) return no('UnknownPlan', `Plan ${account.plan} of Account ${account.name} does not exist${inScope(scope)}.`);
  if (key === 'none') return no('MissingSecret', `Secret ${secretName} holds no key.`);
  if (policy) return no('KeyPolicy', policy);
  return accepted('The key is published: every gateway accepts it.');
}

function compileKeys(
  set: ManifestSet,
  snapshot: Omit<Snapshot, 'version'>,
  secrets: Map<string, Record<string, string>>,
  opts: CompileOptions,
  problems: Problem[],
): { keys: KeyRecord[]; verdicts: Record<string, Verdict> } {
  const keys: KeyRecord[] = [];
  const verdicts: Record<string, Verdict> = {};
  const policies = new Map(set.accounts.map((a) => [a.metadata.name, a.spec.keyPolicy]));
  for (const k of sortByName(set.apiKeys)) {
    const object = `ApiKey/${k.metadata.name}`;
    const account = snapshot.accounts[k.spec.accountRef];
    const policy = policies.get(k.spec.accountRef);
    const violation = k.spec.revoked ? null : policyViolation(k.spec.accountRef, k.spec.expiresAt, policy);
    // No key is generated for a key no gateway could serve.
    const found = keyOf(k, secrets, account && !violation ? opts : { ...opts, keyFor: undefined });
    const state = found === 'malformed' ? 'malformed' : found === null ? 'none' : 'ok';
    verdicts[k.metadata.name] = keyVerdict(k, snapshot, state, opts.scope, violation);
    if (!account) {
      problems.push({ object, field: 'spec.accountRef', message: `unknown Account ${k.spec.accountRef}` });
      continue;
    }
    if (found === 'malformed') {
      problems.push({
        object,
        field: 'spec.secretName',
        message: `Secret ${keySecretName(k.metadata.name, k.spec.secretName)} holds a malformed key under data key "key"`,
      });
      continue;
    }
    if (found === null) continue;
    if (violation) {
      problems.push({ object, field: 'spec.expiresAt', message: violation });
      continue;
    }
    const plan = snapshot.plans[account.plan];
    const created = k.metadata.creationTimestamp === undefined ? NaN : Date.parse(k.metadata.creationTimestamp);
    const createdAt = Number.isNaN(created) ? null : created;
    keys.push({
      name: k.metadata.name,
      account: account.name,
      monthlyBudgetNano: k.spec.monthlyBudgetUsd === undefined ? null : usdToNano(k.spec.monthlyBudgetUsd),
      rpm: minLimit(k.spec.limits?.rpm, plan?.rpm ?? undefined),
      tpm: minLimit(k.spec.limits?.tpm, plan?.tpm ?? undefined),
      models: k.spec.models ?? null,
      ...(k.spec.mcp ? { mcp: mcpAccessOf(k.spec.mcp) } : {}),
      revoked: k.spec.revoked,
      ...found,
      ...expiryFields(k.spec.expiresAt, createdAt, policy),
    });
  }
  return { keys, verdicts };
}

/** The record's expiry and creation time; left out when unknown, so records of keys without them hash as before. */
function expiryFields(expiresAt: string | undefined, createdAt: number | null, policy: Account['spec']['keyPolicy']): Partial<KeyRecord> {
  const at = effectiveExpiry(expiresAt, createdAt, policy);
  return { ...(at === null ? {} : { expiresAt: at }), ...(createdAt === null ? {} : { createdAt }) };
}

/** The key's HMAC and display: from spec.keyHash (a key made in the console), its Secret, or opts.keyFor. */
function keyOf(k: ApiKey, secrets: Map<string, Record<string, string>>, opts: CompileOptions): { hash: string; display: string } | 'malformed' | null {
  // A key made in the console: only its HMAC exists (the ApiKey carries it), no Secret.
  if (k.spec.keyHash) return { hash: k.spec.keyHash, display: k.spec.displayedKey ?? `${KEY_PREFIX}…` };
  const stored = secrets.get(keySecretName(k.metadata.name, k.spec.secretName))?.key;
  if (stored !== undefined && !isWellFormedKey(stored.trim())) return 'malformed';
  const key = (stored ?? opts.keyFor?.(k) ?? null)?.trim();
  return key ? { hash: opts.hashKey ? opts.hashKey(key) : hashKey(key, opts.pepper), display: displayKey(key) } : null;
}

export function compile(set: ManifestSet, opts: CompileOptions): CompileResult {
  const problems: Problem[] = [];
  const secrets = new Map(set.secrets.map((s) => [s.metadata.name, secretValues(s)]));
  const plans: Snapshot['plans'] = {};
  for (const p of sortByName(set.plans)) {
    plans[p.metadata.name] = {
      name: p.metadata.name,
      tier: p.spec.tier,
      anthropicEndpoint: p.spec.anthropicEndpoint,
      models: p.spec.models ?? null,
      rpm: p.spec.limits?.rpm ?? null,
      tpm: p.spec.limits?.tpm ?? null,
      ...(p.spec.mcp ? { mcp: mcpAccessOf(p.spec.mcp) } : {}),
      ...selfServiceOf(p.spec.selfService),
    };
  }
  const accounts: Snapshot['accounts'] = {};
  const accountVerdicts: Record<string, Verdict> = {};
  for (const a of sortByName(set.accounts)) {
    accounts[a.metadata.name] = {
      name: a.metadata.name,
      plan: a.spec.planRef,
      trialCreditNano: usdToNano(a.spec.trialCreditUsd),
      credits: a.spec.credits.map((c) => ({ id: c.id, amountNano: usdToNano(c.amountUsd) })),
      ...(a.spec.billing ? { billing: a.spec.billing } : {}),
      ...(a.spec.keyPolicy ? { keyPolicy: a.spec.keyPolicy } : {}),
      ...selfServiceOf(a.spec.selfService),
    };
    accountVerdicts[a.metadata.name] = accountVerdict(a, plans, opts.scope, problems);
  }
  const routes = compileModels(sortByName(set.modelRoutes), secrets, opts.scope, problems);
  const mcp = compileMcpServers(sortByName(set.mcpServers ?? []), secrets, opts.scope, problems);
  const mcpServers = Object.keys(mcp.servers).length > 0 ? { mcpServers: mcp.servers } : {};
  const guards = compileGuardrails(sortByName(set.guardrails ?? []), problems, secrets, opts.scope);
  const guardrails = guards.guardrails.length > 0 ? { guardrails: guards.guardrails } : {};
  const body = { schema: SNAPSHOT_SCHEMA, plans, accounts, models: routes.models, ...mcpServers, ...guardrails } as const;
  const version = createHash('sha256').update(canonicalJson(body)).digest('hex').slice(0, 16);
  const snapshot: Snapshot = { ...body, version };
  const { keys, verdicts: apiKeys } = compileKeys(set, body, secrets, opts, problems);
  const planVerdicts = Object.fromEntries(Object.values(plans).map((p) => [p.name, accepted(`Tier ${p.tier} is published to the gateways.`)]));
  return {
    snapshot,
    keys,
    problems,
    verdicts: { plans: planVerdicts, accounts: accountVerdicts, apiKeys, modelRoutes: routes.verdicts, mcpServers: mcp.verdicts, guardrails: guards.verdicts },
  };
}

/** An account with an unknown plan stays in the snapshot, but none of its keys can be served. */
function accountVerdict(a: Account, plans: Snapshot['plans'], scope: string | undefined, problems: Problem[]): Verdict {
  const object = `Account/${a.metadata.name}`;
  let verdict = accepted('The account is published to the gateways.');
  const seen = new Set<string>();
  a.spec.credits.forEach((c, i) => {
    if (seen.has(c.id)) {
      problems.push({ object, field: `spec.credits[${i}].id`, message: `duplicate credit id ${c.id}` });
      verdict = { ready: false, served: true, reason: 'DuplicateCreditId', message: `Credit id ${c.id} is listed twice; it is applied once.` };
    }
    seen.add(c.id);
  });
  if (!plans[a.spec.planRef]) {
    problems.push({ object, field: 'spec.planRef', message: `unknown Plan ${a.spec.planRef}` });
    verdict = { ready: false, served: false, reason: 'UnknownPlan', message: `Plan ${a.spec.planRef} does not exist${inScope(scope)}.` };
  }
  return verdict;
}
