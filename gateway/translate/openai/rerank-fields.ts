// What the rerank translators share: a document's text, and the refusal of a field an upstream has no equivalent for.
import { GatewayError } from '../../errors/catalog.ts';

type Body = Record<string, unknown>;

/** A document's text: a string, or the text of a {text} object. */
export function documentText(d: unknown): string {
  if (typeof d === 'string') return d;
  const t = (d as { text?: unknown } | null)?.text;
  return typeof t === 'string' ? t : '';
}

/** A field the upstream's API has no equivalent for, refused before any call (nothing charged). */
export function unsupportedRerankField(client: Body, field: string, upstream: string): void {
  if (client[field] !== undefined && client[field] !== null)
    throw new GatewayError('invalid_request', `${field} is not supported by this model's upstream (${upstream}).`, { param: field });
}
