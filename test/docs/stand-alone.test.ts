// The docs speak to users, who have the repository and nothing else: no page of README.md, docs/ or the chart's README
// may send them to the project's internal documents (DESIGN.md, STYLE.md, TESTING.md, the shared folder beside the
// checkout) or to an issue number they cannot open.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';
import { docPages } from './links.ts';

const INTERNAL: ReadonlyArray<[string, RegExp]> = [
  ['an internal document', /\b(?:DESIGN|STYLE|TESTING)\.md\b/g],
  ['the shared folder', /(?:\.\.\/|\/work\/)shared\b/g],
  ['an issue number', /\b(?:issue|bug|ticket|PR)s?\s*(?:no\.?\s*)?#?\d+/gi],
  // #36, (#12): a number after a hash that is not part of a word, a path, an HTML entity or an anchor (#2-with-...).
  ['an issue reference', /(?<![\w/.&#-]|\]\()#\d+(?![\w-])/g],
];

/** Each reference of `text` a reader cannot follow, as "line N: what (the text)". */
export function internalReferences(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [what, re] of INTERNAL) for (const m of line.matchAll(re)) found.push(`line ${i + 1}: ${what} (${m[0]})`);
  });
  return found;
}

describe('the docs stand alone', () => {
  it.each(docPages(ROOT))('%s cites no internal document and no issue number', (page) => {
    expect(internalReferences(readFileSync(join(ROOT, page), 'utf8'))).toEqual([]);
  });

  it('finds each kind of reference a reader cannot follow, and leaves anchors, paths and entities alone', () => {
    const page = [
      'As DESIGN.md section 7 says, and STYLE.md.',
      'See ../shared/notes/mcp.md.',
      'Fixed by issue 18 (Issue #26, issues 3).',
      'Since #36, and (#12).',
      '[next](getting-started.md#2-with-a-real-openai-or-anthropic-account) [here](#3) `a/#4` &#39; color #fff',
    ].join('\n');
    expect(internalReferences(page)).toEqual([
      'line 1: an internal document (DESIGN.md)',
      'line 1: an internal document (STYLE.md)',
      'line 2: the shared folder (../shared)',
      'line 3: an issue number (issue 18)',
      'line 3: an issue number (Issue #26)',
      'line 3: an issue number (issues 3)',
      'line 3: an issue reference (#26)',
      'line 4: an issue reference (#36)',
      'line 4: an issue reference (#12)',
    ]);
  });
});
