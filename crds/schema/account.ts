import { z } from 'zod';
import { API_VERSION, baseStatus, cel, listMapKeys, metadata, objectName, usd } from './common.ts';

export const credit = z.object({
  id: z.string().min(1).max(128).describe('Unique id of the top-up; each id is applied exactly once.'),
  amountUsd: z.number().positive().describe('Amount credited, in USD.'),
  note: z.string().max(1024).optional(),
}).meta(cel({ rule: 'self == oldSelf', message: 'a credit cannot be changed once added; add a credit with a new id' }));

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
  billing: z
    .object({
      invoiceHeader: z.string().max(1024).optional(),
      poNumber: z.string().max(256).optional(),
      sla: z.string().max(256).optional(),
    })
    .optional()
    .describe('Enterprise billing details.'),
});

export const account = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Account'),
  metadata,
  spec: accountSpec,
  status: z
    .object({ ...baseStatus, balanceUsd: z.number().optional(), monthSpendUsd: z.number().optional() })
    .optional(),
});

export type Account = z.infer<typeof account>;
