// Turns a zod failure into the gateway's 400, naming the field in the caller's dialect (OpenAI writes
// `messages[0].content`, Anthropic `messages.0.content`); checks task_type's length with its own code.
import type { z } from 'zod';
import { GatewayError, type Dialect } from '../errors/catalog.ts';
import { TASK_TYPE_MAX } from './openai-schemas.ts';
import { reportedIssue } from './zod-issue.ts';

/** A zod issue's path as each API writes a field's place. */
export function fieldPath(path: readonly PropertyKey[], dialect: Dialect): string {
  if (dialect === 'anthropic') return path.map(String).join('.');
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : out === '' ? String(p) : `${out}.${String(p)}`), '');
}

export function parseBody<T>(schema: z.ZodType<T>, body: unknown, dialect: Dialect = 'openai'): T {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const issue = first ? reportedIssue(first) : undefined;
  const path = issue ? fieldPath(issue.path, dialect) : '';
  const what = `${path ? `${path}: ` : ''}${issue?.message ?? 'invalid body'}`;
  // Anthropic's messages are `field: reason`, Cohere's `invalid request: ...`; OpenAI's error has the field in `param` too.
  const message = dialect === 'anthropic' ? what : dialect === 'cohere' ? `invalid request: ${what}` : `Invalid request: ${what}`;
  throw new GatewayError('invalid_request', message, { param: path || undefined });
}

/** metadata.task_type: optional string of at most 64 characters. */
export function taskTypeOf(metadata: { task_type?: string } | null | undefined): string | null {
  const t = metadata?.task_type;
  if (t === undefined) return null;
  if ([...t].length > TASK_TYPE_MAX) {
    throw new GatewayError('task_type_too_long', `metadata.task_type is at most ${TASK_TYPE_MAX} characters (got ${[...t].length}).`, {
      param: 'metadata.task_type',
    });
  }
  return t;
}
