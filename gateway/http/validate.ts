// Turns a zod failure into the gateway's 400, naming the field; checks task_type's length with its own code.
import type { z } from 'zod';
import { GatewayError } from '../errors/catalog.ts';
import { TASK_TYPE_MAX } from './openai-schemas.ts';

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const path = issue?.path.map(String).join('.') ?? '';
  throw new GatewayError('invalid_request', `Invalid request: ${path ? `${path}: ` : ''}${issue?.message ?? 'invalid body'}`, { param: path || undefined });
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
