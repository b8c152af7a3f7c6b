// Every copy-paste example of README.md and docs/ is run by some test: each <!-- example:NAME --> block of a page is
// read by a test with docExample('<page>', 'NAME') (test/helpers/docs.ts), so an example nobody runs fails here.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { ROOT } from '../helpers/process.ts';
import { docPages } from './links.ts';

function testSources(): string {
  return (readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' }) as string[])
    .filter((f) => f.endsWith('.ts') && f !== 'docs/examples.test.ts')
    .map((f) => readFileSync(join(ROOT, 'test', f), 'utf8'))
    .join('\n');
}

const examples = docPages(ROOT).flatMap((page) =>
  [...readFileSync(join(ROOT, page), 'utf8').matchAll(/^<!-- example:([\w-]+) -->$/gm)].map((m) => [page, m[1] as string] as const),
);

describe('the examples of README.md and docs/', () => {
  it('are where the tests look for them (the quickstart at the top of the README)', () => {
    expect(examples.length).toBeGreaterThanOrEqual(15);
    expect(examples[0]).toEqual(['README.md', 'quickstart']);
  });

  it.each(readdirSync(join(ROOT, 'examples')))('examples/%s is run by a command of an example block', (file) => {
    expect(examples.map(([page, name]) => docExample(page, name)).filter((code) => code.includes(`node examples/${file}`))).not.toEqual([]);
  });

  it.each(examples)('%s: %s is a closed block, and a test runs it', (page, name) => {
    expect(docExample(page, name).length).toBeGreaterThan(0);
    expect(testSources()).toContain(`docExample('${page}', '${name}')`);
  });
});
