import { z } from 'zod';
import { modelPattern, usd } from './common.ts';

/**
 * What a person may give the keys they make for themselves in the console (the verb create-own-keys, without
 * manage-keys). A Plan sets it for all its accounts, an Account for itself; where both do, the tighter holds.
 */
export const selfServiceCaps = z.object({
  maxBudgetUsd: usd.optional().describe('Each self-service key must have a monthly budget of at most this many USD (a key without a budget is refused).'),
  models: z
    .array(modelPattern)
    .optional()
    .describe(
      'Each self-service key must name its models, each one of these, a model id one of them matches, or a glob starting with the prefix of one ending in *.',
    ),
  maxKeysPerPerson: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe("Unrevoked self-service keys one person may have in an account (instead of the console's SVC_CONSOLE_OWN_KEYS_MAX)."),
});
