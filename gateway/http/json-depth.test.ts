import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth.ts';

const nest = (n: number, open = '[', close = ']'): string => `${open.repeat(n)}${close.repeat(n)}`;

describe('nestedDeeperThan', () => {
  it.each([
    ['flat object', '{"a":1,"b":[1,2]}', 2, false],
    ['exactly the limit', nest(MAX_JSON_DEPTH), MAX_JSON_DEPTH, false],
    ['one past the limit', nest(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH, true],
    ['10,000 levels in an unknown field', `{"model":"m","x":${nest(10_000)}}`, MAX_JSON_DEPTH, true],
    ['objects count like arrays', `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`, MAX_JSON_DEPTH, true],
    ['brackets inside strings do not count', JSON.stringify({ s: '['.repeat(10_000) }), MAX_JSON_DEPTH, false],
    ['an escaped quote does not end a string', JSON.stringify({ s: `\\"${'['.repeat(500)}` }), MAX_JSON_DEPTH, false],
    ['an escaped backslash before a quote ends the string', `{"s":"a\\\\"${','.repeat(200)}"x":${nest(200)}}`, MAX_JSON_DEPTH, true],
    ['three backslashes and a quote: still inside', `{"s":"a\\\\\\"${'['.repeat(300)}"}`, MAX_JSON_DEPTH, false],
    ['a long prompt then deep nesting', `{"s":${JSON.stringify('word "quoted" \\ '.repeat(20_000))},"x":${nest(200)}}`, MAX_JSON_DEPTH, true],
    ['a string left open', `{"s":"${'['.repeat(300)}`, MAX_JSON_DEPTH, false],
    ['limit 0 refuses any container', '[]', 0, true],
    ['limit 1 takes one level', '[1]', 1, false],
    ['empty body', '', MAX_JSON_DEPTH, false],
    ['depth counts before the text ends', nest(5).slice(0, 7), 3, true],
  ])('%s', (_name, text, limit, deeper) => {
    expect(nestedDeeperThan(Buffer.from(text), limit)).toBe(deeper);
  });
});
