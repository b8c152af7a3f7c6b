import { z } from 'zod';
import { API_VERSION, baseStatus, metadata, objectName, usd } from './common.ts';

export const credit = z.object({
  id: z.string().min(1).max(128).describe('Unique id of the top-up; each id is applied exactly once.'),
  amountUsd: z.number().positive().describe('Amount credited, in USD.'),
  note: z.string().max(1024).optional(),
});

export const accountSpec = z.object({
  planRef: objectName.describe('Name of the Plan of this account.'),
  trialCreditUsd: usd.default(1).describe('Trial credit granted once when the account is first seen.'),
  credits: z.array(credit).default([]).describe('Top-ups, append-only; each applied exactly once by id.'),
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
