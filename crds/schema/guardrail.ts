import { z } from 'zod';
import { API_VERSION, baseStatus, cel, metadata } from './common.ts';
import { REMOTE_SERVICES, remoteCheckFields } from './guardrail-remote.ts';

/** The model endpoints whose text a Guardrail reads by default. */
export const GUARDED_ENDPOINTS = ['chat', 'messages', 'responses', 'completions', 'embeddings'] as const;
/** Every endpoint a Guardrail may name: the model endpoints, and MCP tool calls (only when listed). */
export const GUARDABLE_ENDPOINTS = [...GUARDED_ENDPOINTS, 'mcp'] as const;

const glob = z.string().min(1).max(253).describe('A name, or a glob where * matches any run of characters.');

const check = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be a lowercase name (letters, digits, -)')
      .optional()
      .describe('Names the check in errors, usage facts and metrics (default: the detector).'),
    detector: z
      .enum(['secrets', 'email', 'phone', 'card', 'iban', 'ip', 'national-id', 'regex', 'words'])
      .optional()
      .describe(
        'A local detector (exactly one of detector or a remote service per check). secrets: cloud and service tokens, private keys, JWTs, credentials in URLs; email; phone (international form); card (Luhn-checked); iban (checksum); ip (v4, v6); national-id (Spanish DNI/NIE, US SSN); regex: the patterns below; words: the words below.',
      ),
    action: z
      .enum(['block', 'mask', 'log'])
      .describe(
        'block: refuse the call (400 content_blocked); mask: replace each match with a placeholder such as <EMAIL_1>; log: count and record only. Remote services take block (their own masks are applied) or log.',
      ),
    restore: z.boolean().default(false).describe("mask only: put the caller's own values back where the answer repeats a placeholder."),
    highEntropy: z.boolean().default(false).describe('secrets only: also any 32+ character token of high entropy (finds hashes and ids too).'),
    patterns: z
      .array(
        z.object({
          name: z
            .string()
            .min(1)
            .max(63)
            .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be a lowercase name'),
          pattern: z.string().min(1).max(1000).describe('A JavaScript regular expression (Unicode mode).'),
        }),
      )
      .max(50)
      .optional()
      .describe('regex only.'),
    words: z.array(z.string().min(1).max(200)).max(10_000).optional().describe('words only: whole words or phrases, any case.'),
    ...remoteCheckFields,
  })
  .refine((c) => [c.detector, ...REMOTE_SERVICES.map((k) => c[k])].filter((x) => x !== undefined).length === 1, {
    message: `takes exactly one of detector, ${REMOTE_SERVICES.join(', ')}`,
  })
  .refine((c) => c.detector !== undefined || c.action !== 'mask', { message: 'a remote service takes action block or log', path: ['action'] })
  .refine((c) => c.detector !== 'regex' || (c.patterns?.length ?? 0) > 0, { message: 'regex needs patterns', path: ['patterns'] })
  .refine((c) => c.detector !== 'words' || (c.words?.length ?? 0) > 0, { message: 'words needs words', path: ['words'] })
  .refine((c) => !c.restore || c.action === 'mask', { message: 'restore needs action mask', path: ['restore'] })
  .meta(
    cel(
      {
        rule: `(has(self.detector) ? 1 : 0) + ${REMOTE_SERVICES.map((k) => `(has(self.${k}) ? 1 : 0)`).join(' + ')} == 1`,
        message: `takes exactly one of detector, ${REMOTE_SERVICES.join(', ')}`,
      },
      { rule: "has(self.detector) || self.action != 'mask'", message: 'a remote service takes action block or log', fieldPath: '.action' },
      {
        rule: "!has(self.detector) || self.detector != 'regex' || (has(self.patterns) && size(self.patterns) > 0)",
        message: 'regex needs patterns',
        fieldPath: '.patterns',
      },
      {
        rule: "!has(self.detector) || self.detector != 'words' || (has(self.words) && size(self.words) > 0)",
        message: 'words needs words',
        fieldPath: '.words',
      },
      { rule: "!has(self.restore) || !self.restore || self.action == 'mask'", message: 'restore needs action mask', fieldPath: '.restore' },
    ),
  );

export const guardrailSpec = z.object({
  selector: z
    .object({
      plans: z.array(glob).max(100).optional().describe('Plans whose accounts it covers (default: every plan).'),
      accounts: z.array(glob).max(1000).optional().describe('Accounts it covers (default: every account).'),
      keys: z.array(glob).max(1000).optional().describe('ApiKeys it covers (default: every key).'),
      models: z.array(glob).max(1000).optional().describe('Public model ids it covers (default: every model).'),
    })
    .prefault({})
    .describe('Which traffic: a call is covered when it matches every list given.'),
  endpoints: z
    .array(z.enum(GUARDABLE_ENDPOINTS))
    .min(1)
    .default([...GUARDED_ENDPOINTS])
    .describe(
      'chat (/v1/chat/completions), messages (/anthropic/v1/messages), responses (/v1/responses), completions, embeddings (default: these five); mcp: MCP tools/call arguments and results (only when listed).',
    ),
  stages: z
    .array(z.enum(['request', 'response']))
    .min(1)
    .default(['request', 'response'])
    .describe("request: the caller's text before any upstream sees it; response: the answer before the caller sees it."),
  checks: z.array(check).min(1).max(50),
});

export const guardrail = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Guardrail'),
  metadata,
  spec: guardrailSpec,
  status: z.object({ ...baseStatus }).optional(),
});

export type GuardrailCr = z.infer<typeof guardrail>;
export type GuardrailCheck = z.infer<typeof check>;
/** One check's schema (tests build checks with it). */
export const guardrailCheck = check;
