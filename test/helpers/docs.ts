// The docs' examples are part of the product: tests run them as written. Each lives in README.md or a page of docs/,
// between <!-- example:NAME --> and <!-- /example --> (SQL between <!-- sql:NAME --> and <!-- /sql -->).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.ts';

/** The text of a page, by its path from the repository root (`README.md`, `docs/api.md`). */
export function docText(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

function block(file: string, tag: string, name: string): string {
  const m = new RegExp(`<!-- ${tag}:${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\`\`\`\\s*<!-- /${tag} -->`).exec(docText(file));
  if (!m?.[1]) throw new Error(`${file} has no ${tag} block "${name}" (<!-- ${tag}:${name} --> ... <!-- /${tag} -->)`);
  return m[1];
}

/** The fenced block of `file` between <!-- example:NAME --> and <!-- /example -->. */
export function docExample(file: string, name: string): string {
  return block(file, 'example', name);
}

/** The SQL block of `file` between <!-- sql:NAME --> and <!-- /sql -->. */
export function docSql(file: string, name: string): string {
  return block(file, 'sql', name);
}
