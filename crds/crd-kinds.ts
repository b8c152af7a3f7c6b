// What the CRDs add around each zod schema: resource names, short names and the columns of `kubectl get`.
// Field rules (CEL included) live on the zod schemas themselves, next to the fields they check.
import type { z } from 'zod';
import { CR_SCHEMAS } from './schema/index.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 0 shows in `kubectl get`, 1 only with `-o wide`. */
  priority?: number;
}

export type CrKind = keyof typeof CR_SCHEMAS;
/** A custom resource of kind K, as its schema parses it (defaults applied). */
export type CrOf<K extends CrKind> = z.infer<(typeof CR_SCHEMAS)[K]>;

export interface CrdKind {
  kind: CrKind;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  schema: z.ZodType;
  columns: PrinterColumn[];
}

const READY: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Whether the operator accepted the object.',
};
const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export const CRD_KINDS: readonly CrdKind[] = [
  {
    kind: 'Plan',
    plural: 'plans',
    singular: 'plan',
    shortNames: ['pln'],
    description: 'A Plan sets the tier, the models and the rate limits open to the accounts on it.',
    schema: CR_SCHEMAS.Plan,
    columns: [
      { name: 'Tier', type: 'integer', jsonPath: '.spec.tier' },
      { name: 'Anthropic', type: 'boolean', jsonPath: '.spec.anthropicEndpoint', description: 'Anthropic endpoint open.' },
      { name: 'RPM', type: 'integer', jsonPath: '.spec.limits.rpm' },
      { name: 'TPM', type: 'integer', jsonPath: '.spec.limits.tpm' },
      READY,
      AGE,
    ],
  },
  {
    kind: 'Account',
    plural: 'accounts',
    singular: 'account',
    shortNames: ['acct'],
    description: 'An Account holds one prepaid balance (trial credit plus top-ups) shared by its ApiKeys.',
    schema: CR_SCHEMAS.Account,
    columns: [
      { name: 'Plan', type: 'string', jsonPath: '.spec.planRef' },
      { name: 'Spend', type: 'string', jsonPath: '.status.monthSpendUsd', description: 'Spend this month (UTC) in USD.' },
      { name: 'Balance', type: 'string', jsonPath: '.status.balanceUsd', description: 'Balance (credits minus spend) in USD.' },
      READY,
      AGE,
    ],
  },
  {
    kind: 'ApiKey',
    plural: 'apikeys',
    singular: 'apikey',
    shortNames: ['ak'],
    description: 'An ApiKey is one secret key of an Account, with its own budget, rate limits and model whitelist.',
    schema: CR_SCHEMAS.ApiKey,
    columns: [
      { name: 'State', type: 'string', jsonPath: '.status.state' },
      { name: 'Key', type: 'string', jsonPath: '.status.displayedKey', description: 'The displayed form of the key.' },
      { name: 'Account', type: 'string', jsonPath: '.spec.accountRef' },
      { name: 'Budget', type: 'number', jsonPath: '.spec.monthlyBudgetUsd', description: 'Monthly budget in USD.' },
      { name: 'Spend', type: 'string', jsonPath: '.status.monthSpendUsd', description: 'Spend this month (UTC) in USD.' },
      { name: 'Budget%', type: 'integer', jsonPath: '.status.budgetUsedPercent', description: 'Percent of the monthly budget spent this month.' },
      { name: 'Secret', type: 'string', jsonPath: '.status.secretName', priority: 1 },
      AGE,
      // A string: kubectl prints a future time in a `date` column as <invalid>.
      { name: 'Expires', type: 'string', jsonPath: '.status.expiresAt', description: 'When the key expires (RFC 3339); empty: never.' },
    ],
  },
  {
    kind: 'ModelRoute',
    plural: 'modelroutes',
    singular: 'modelroute',
    shortNames: ['mr'],
    description: 'A ModelRoute publishes one model id: its price, its upstream targets and its fallbacks.',
    schema: CR_SCHEMAS.ModelRoute,
    columns: [
      { name: 'Model', type: 'string', jsonPath: '.spec.model', description: 'Public model id (default: the name).' },
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Min Tier', type: 'integer', jsonPath: '.spec.minTier' },
      { name: 'Input $/MTok', type: 'number', jsonPath: '.spec.pricing.inputPerMTokUsd' },
      { name: 'Output $/MTok', type: 'number', jsonPath: '.spec.pricing.outputPerMTokUsd' },
      { name: 'Targets', type: 'string', jsonPath: '.spec.targets[*].name', priority: 1 },
      READY,
      {
        name: 'State',
        type: 'string',
        jsonPath: '.status.conditions[?(@.type=="Available")].reason',
        description: 'Availability from the probes: Operational, DegradedPerformance, PartialOutage, MajorOutage, UnderMaintenance.',
      },
      AGE,
    ],
  },
  {
    kind: 'Incident',
    plural: 'incidents',
    singular: 'incident',
    shortNames: ['inc'],
    description: 'An Incident is declared by people: affected models, impact, status, updates, or a maintenance window; it shows on /status.',
    schema: CR_SCHEMAS.Incident,
    columns: [
      { name: 'Title', type: 'string', jsonPath: '.spec.title' },
      { name: 'Models', type: 'string', jsonPath: '.spec.models' },
      { name: 'Impact', type: 'string', jsonPath: '.spec.impact' },
      { name: 'Status', type: 'string', jsonPath: '.spec.status' },
      AGE,
    ],
  },
  {
    kind: 'McpServer',
    plural: 'mcpservers',
    singular: 'mcpserver',
    shortNames: ['mcp'],
    description: 'An McpServer puts one MCP server behind the gateway: its URL, the credential sent to it, the tools offered and their price.',
    schema: CR_SCHEMAS.McpServer,
    columns: [
      { name: 'URL', type: 'string', jsonPath: '.spec.url' },
      { name: 'Transport', type: 'string', jsonPath: '.spec.transport', priority: 1 },
      { name: 'Prefix', type: 'string', jsonPath: '.spec.prefix', description: 'Tools on /mcp are named <prefix>__<tool> (default: the name).' },
      { name: '$/Call', type: 'number', jsonPath: '.spec.pricing.perCallUsd', description: 'USD per tools/call.' },
      READY,
      AGE,
    ],
  },
  {
    kind: 'Guardrail',
    plural: 'guardrails',
    singular: 'guardrail',
    shortNames: ['gr'],
    description: 'A Guardrail says which checks run on which traffic (secrets, PII, your own patterns) and what each does on a match: block, mask or log.',
    schema: CR_SCHEMAS.Guardrail,
    columns: [
      { name: 'Endpoints', type: 'string', jsonPath: '.spec.endpoints', priority: 1 },
      { name: 'Stages', type: 'string', jsonPath: '.spec.stages' },
      READY,
      AGE,
    ],
  },
];

export const CR_KINDS: readonly CrKind[] = CRD_KINDS.map((k) => k.kind);

/** Resource (plural) name of each kind, as in the API path: `plans`, `accounts`, `apikeys`, `modelroutes`. */
export const PLURALS = Object.fromEntries(CRD_KINDS.map((k) => [k.kind, k.plural])) as Readonly<Record<CrKind, string>>;
