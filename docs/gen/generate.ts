// `npm run docs:gen`: writes the reference pages of docs/reference/ from their sources (docs/gen/pages.ts). A test
// (docs/gen/generate.test.ts) fails when a committed page differs from what this writes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { referencePages } from './pages.ts';

const root = join(import.meta.dirname, '..', '..');
for (const [path, text] of await referencePages(root)) {
  writeFileSync(join(root, path), text);
  console.log(`wrote ${path}`);
}
