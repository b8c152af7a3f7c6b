// Shared pieces of the custom resources (group gateway.svc.dev, version v1alpha1).
import { z } from 'zod';

export const GROUP = 'gateway.svc.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** A Kubernetes object name (RFC 1123 subdomain). */
export const objectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a lowercase RFC 1123 name')
  .describe('Name of an object in the same namespace.');

export const metadata = z.object({
  name: objectName,
  namespace: z.string().optional(),
  generation: z.number().int().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  /** Set by the API server (absent in manifest files): the start of a key's age. */
  creationTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** Non-negative USD amount as written in manifests; converted to integer micro-USD when compiled. */
export const usd = z.number().nonnegative().describe('Amount in USD.');

/** An amount in status: USD with cents as a string ("12.34", "-0.50"), as `kubectl get` prints it. */
export const usdString = z.string().regex(/^-?\d+\.\d{2}$/);

/** What the operator's spend refresh writes into Account and ApiKey status (operator/controllers/spend-status.ts). */
export const spendStatus = {
  spendMonth: z
    .string()
    .regex(/^\d{4}-\d{2}$/)
    .optional()
    .describe('The UTC month (YYYY-MM) the spend figures are of.'),
  monthSpendUsd: usdString.optional().describe('Spend this month (UTC) in USD, to the cent, as the ledger the gateways charge holds it.'),
  spendObservedTime: z.iso
    .datetime({ offset: true })
    .optional()
    .describe(
      'When the operator last wrote the spend figures (while they stay the same, again after 10 refresh intervals or 10 minutes, whichever is longer): an old time means stale figures.',
    ),
};

export const modelPattern = z.string().min(1).max(200).describe('A model id, or a glob where * matches any run of characters.');

export const limits = z
  .object({
    rpm: z.number().int().positive().optional().describe('Requests per minute.'),
    tpm: z.number().int().positive().optional().describe('Tokens per minute (input plus output).'),
  })
  .describe('Rate limits.');

/** A CEL rule the API server enforces. zod cannot express these; the generated CRD carries them. */
export interface CelRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  /** Where the error points, for rules set on a parent (e.g. `.spec.fallbacks` for a rule on the root). */
  fieldPath?: string;
}

/** Metadata for `.meta()`: CEL rules that the CRD generator writes as `x-kubernetes-validations`. */
export function cel(...rules: CelRule[]): { 'x-kubernetes-validations': CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}

/** Metadata for `.meta()` on an array: entries are unique by these keys (the API server refuses duplicates). */
export function listMapKeys(...keys: string[]): Record<string, string | string[]> {
  return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys };
}

export const condition = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  observedGeneration: z.number().int().optional(),
  lastTransitionTime: z.string(),
});

export const baseStatus = {
  observedGeneration: z.number().int().optional(),
  conditions: z.array(condition).meta(listMapKeys('type')).optional(),
};
