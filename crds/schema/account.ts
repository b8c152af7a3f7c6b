import { z } from 'zod';
import { selfServiceCaps } from './self-service.ts';
import { API_VERSION, baseStatus, cel, listMapKeys, metadata, objectName, spendStatus, usd, usdString } from './common.ts';

export const credit = z
  .object({
    id: z.string().min(1).max(128).describe('Unique id of the top-up; each id is applied exactly once.'),
    amountUsd: z.number().positive().describe('Amount credited, in USD.'),
    note: z.string().max(1024).optional(),
  })
  .meta(cel({ rule: 'self == oldSelf', message: 'a credit cannot be changed once added; add a credit with a new id' }));

/** One statement line: printable characters, no control characters (a line break only where allowed). */
const LINE = '[^\\x00-\\x09\\x0b-\\x1f\\x7f]';

/**
 * The uptime SLA. An account is eligible when the platform team sets this (the enterprise contract is the explicit
 * flag; it needs an invoiceHeader). Per UTC month: uptime = the month's uptime of each model the account called,
 * weighted by its calls; below `target`, a service credit by tier (below 99.9% 10%, below 99.0% 25%, below 95.0% 100%
 * of the month's spend on the models below target; billing/sla/sla.ts), applied once as ledger entry sla-YYYY-MM.
 */
export const sla = z.object({
  target: z.number().min(90).max(99.999).describe('Monthly uptime target in percent, 90 to 99.999 (e.g. 99.9).'),
});

export const billing = z
  .object({
    invoiceHeader: z
      .string()
      .min(1)
      .max(1024)
      .regex(new RegExp(`^${LINE}{1,120}(\\n${LINE}{0,120}){0,7}$`), 'at most 8 lines of at most 120 printable characters')
      .optional()
      .describe('Statement header: legal name, address lines, tax id; at most 8 lines of 120 characters.'),
    poNumber: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\x20-\x7e]+$/, 'printable ASCII on one line')
      .optional()
      .describe('Purchase order number printed on every statement.'),
    taxId: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\x20-\x7e]+$/, 'printable ASCII on one line')
      .optional()
      .describe('Tax id (VAT, EIN, ...).'),
    netTermsDays: z.number().int().min(0).max(120).optional().describe('Payment terms in days, printed on statements.'),
    sla: sla.optional(),
  })
  .meta(cel({ rule: '!has(self.sla) || has(self.invoiceHeader)', message: 'an SLA is for enterprise accounts: set invoiceHeader too', fieldPath: '.sla' }));

export const keyPolicy = z
  .object({
    maxKeyAgeDays: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .optional()
      .describe('Longest life of a key in days from its creation: a key expires then at the latest, whatever its expiresAt says.'),
    requireExpiry: z.boolean().default(false).describe('Keys without spec.expiresAt are refused (not published to the gateways).'),
  })
  .describe("Rules for this account's keys, enforced by the operator and the console's Create form.");

export const selfService = selfServiceCaps
  .extend({
    revokeOnOffboard: z
      .boolean()
      .default(false)
      .describe(
        'The operator revokes the keys people made in the console once their owner has no right left on this account (a LocalSubjectAccessReview per owner every SVC_OFFBOARD_CHECK_SECONDS, with the user name and groups recorded on the key).',
      ),
  })
  .describe("Keys people make for themselves in the console: caps (with the Plan's, the tighter holds) and offboarding.");

export const accountSpec = z.object({
  planRef: objectName.describe('Name of the Plan of this account.'),
  trialCreditUsd: usd.default(1).describe('Trial credit granted once when the account is first seen.'),
  credits: z
    .array(credit)
    .default([])
    .describe('Top-ups, append-only; each applied exactly once by id.')
    // Keyed by id, so the API server pairs each credit with its stored self: that is what lets the rule on
    // `credit` compare it with oldSelf. A whole-list "every old id is still here" rule exceeds the CEL cost budget
    // of an unbounded list, so removal is caught by size only (removing one and adding one in a single write
    // passes here; the operator applies each id once regardless).
    .meta({
      ...listMapKeys('id'),
      ...cel({ rule: 'self.size() >= oldSelf.size()', message: 'credits are append-only: a credit cannot be removed' }),
    }),
  billing: billing.optional().describe('Enterprise billing: what monthly statements carry, and the uptime SLA.'),
  keyPolicy: keyPolicy.optional(),
  selfService: selfService.optional(),
  lowBalanceThresholdUsd: usd
    .optional()
    .describe('When the balance drops below this many USD, the operator records one Event LowBalance (again after a top-up lifts it and it drops again).'),
});

export const account = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Account'),
  metadata,
  spec: accountSpec,
  status: z
    .object({
      ...baseStatus,
      ...spendStatus,
      balanceUsd: usdString.optional().describe('Credits minus spend, as the ledger holds them (USD, to the cent; negative possible).'),
      lowBalance: z
        .boolean()
        .optional()
        .describe('Whether the balance is below spec.lowBalanceThresholdUsd (an Event LowBalance was recorded when it dropped).'),
    })
    .optional(),
});

export type Account = z.infer<typeof account>;
