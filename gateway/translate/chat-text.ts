// The text of a Chat Completions message's content, as every Chat -> other-protocol translator reads it: a string, or
// text and refusal parts (any other part is refused here, naming it); null or absent is no text.
import { blocksAt, stringAt, unsupported } from './json-read.ts';

export function textOf(content: unknown, path: string): string[] {
  if (typeof content === 'string') return [content];
  if (content === null || content === undefined) return [];
  return blocksAt(content, path).map((p, i) => {
    if (p.type === 'text') return stringAt(p.text, `${path}[${i}].text`);
    if (p.type === 'refusal') return stringAt(p.refusal, `${path}[${i}].refusal`);
    throw unsupported(`${path}[${i}]`, `a ${String(p.type)} part is not allowed here`);
  });
}
