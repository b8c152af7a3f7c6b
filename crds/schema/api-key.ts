import { z } from 'zod';
import { API_VERSION, baseStatus, cel, limits, metadata, modelPattern, objectName, spendStatus, usd } from './common.ts';
import { mcpAccess } from './mcp-server.ts';

const EXPIRES_AT_RANGE = 'must lie between 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z once its offset is applied';
/** The instants whose UTC form has a four-digit year: from 0000-01-01T00:00:00Z up to 10000-01-01 excluded. */
const FIRST_MS = Date.parse('0000-01-01T00:00:00Z');
const PAST_LAST_MS = Date.parse('+010000-01-01T00:00:00Z');
const inFourDigitYears = (v: string): boolean => {
  const ms = Date.parse(v);
  return ms >= FIRST_MS && ms < PAST_LAST_MS;
};

export const apiKeySpec = z.object({
  accountRef: objectName.describe('Name of the Account this key bills to.'),
  displayName: z.string().max(256).optional().describe('Human-readable name of the key.'),
  monthlyBudgetUsd: usd.optional().describe('Spend cap per calendar month (UTC); none when unset.'),
  limits: limits.optional().describe('Rate limits of this key, capped by the plan.'),
  models: z.array(modelPattern).optional().describe('Whitelist of model ids or globs; none when unset.'),
  mcp: mcpAccess.optional().describe('MCP servers and tools this key may use, within its plan (globs); none when unset.'),
  revoked: z
    .boolean()
    .default(false)
    .describe('Revokes the key; irreversible.')
    .meta(cel({ rule: 'self || !oldSelf', message: 'a revoked ApiKey cannot be un-revoked; create a new ApiKey instead' })),
  secretName: objectName.optional().describe('Secret holding the key under data key `key` (default <apikey>-key).'),
  keyHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe(
      "Keys made in the console: HMAC-SHA-256 (hex) of the key under the gateways' pepper. The key itself is kept nowhere, so no Secret is read or generated.",
    )
    .meta(cel({ rule: 'self == oldSelf', message: 'keyHash cannot change; rotate to a new ApiKey instead' })),
  displayedKey: z
    .string()
    .regex(/^sk-svc-…[0-9A-Za-z]{4}$/)
    .optional()
    .describe('With keyHash: the displayed form of the key (sk-svc-… and its last 4 characters).'),
  expiresAt: z.iso
    .datetime({ offset: true })
    // An offset can carry a valid-looking time out of RFC 3339's four-digit years (9999-12-31T23:59:59-23:59 is
    // 10000-01-01T23:58:59Z), which the gateways could not write back in /v1/me or the status.
    .refine(inFourDigitYears, { message: EXPIRES_AT_RANGE })
    .meta(cel({ rule: 'self.getFullYear() >= 0 && self.getFullYear() <= 9999', message: EXPIRES_AT_RANGE }))
    .optional()
    .describe(
      'RFC 3339 time from which every gateway answers 401 key_expired (in-flight calls complete). May be changed, also into the past: the key stops at once.',
    ),
});

export const apiKey = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ApiKey'),
  metadata,
  spec: apiKeySpec,
  status: z
    .object({
      ...baseStatus,
      state: z.enum(['Active', 'Expired', 'Revoked']).optional(),
      expiresAt: z.string().optional().describe('When the key expires: spec.expiresAt, or earlier by the Account keyPolicy.maxKeyAgeDays.'),
      displayedKey: z.string().optional(),
      secretName: z.string().optional(),
      revokedAt: z.string().optional(),
      expiringSoon: z.boolean().optional().describe('True from 14 days before the expiry (an Event KeyExpiringSoon was recorded then).'),
      ...spendStatus,
      budgetUsedPercent: z
        .number()
        .int()
        .nonnegative()
        .optional()
        .describe('Whole percent of spec.monthlyBudgetUsd spent this month, rounded down (100 with a budget of 0); absent without a budget.'),
      budgetAlertLevel: z
        .enum(['Warning', 'Exhausted'])
        .optional()
        .describe(
          'The budget level reached in spendMonth (Warning from 80%, Exhausted at 100%); each was told once by an Event KeyBudgetWarning or KeyBudgetExhausted.',
        ),
    })
    .optional(),
});

export type ApiKey = z.infer<typeof apiKey>;

/** The Secret that holds an ApiKey's key: spec.secretName, else `<apikey>-key` (the one place that default lives). */
export function keySecretName(apiKeyName: string, secretName: string | undefined): string {
  return secretName ?? `${apiKeyName}-key`;
}
