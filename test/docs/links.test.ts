// Every relative link and #anchor of README.md, docs/ and the chart's README resolves (a moved section or a renamed heading breaks one).
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.ts';
import { anchorsOf, brokenLinks, docPages } from './links.ts';

describe('internal links of README.md and docs/', () => {
  it.each(docPages(ROOT))('%s: every relative link and anchor resolves', (page) => {
    expect(brokenLinks(ROOT, page)).toEqual([]);
  });

  it("names headings' anchors as GitHub does, and finds a broken file, anchor or heading", () => {
    expect([...anchorsOf("# Redis failover: what users see\n## The exporter's guarantees\n### `x` (3.15 rows)\n## Tests\n## Tests\n")]).toEqual([
      'redis-failover-what-users-see',
      'the-exporters-guarantees',
      'x-315-rows',
      'tests',
      'tests-1',
    ]);
    const page = '# Page\n## Here\n[ok](#here) [gone](#there) [file](nowhere.md) [code](`#not-a-link`) `[x](#inline)`\n';
    expect(brokenLinks(ROOT, 'docs/page.md', page)).toEqual([
      'docs/page.md: #there (no heading #there in docs/page.md)',
      'docs/page.md: nowhere.md (no file docs/nowhere.md)',
    ]);
  });
});
