// The README's examples are part of the product: tests run them as written.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './process.ts';

/** The fenced block of the README between <!-- example:NAME --> and <!-- /example -->. */
export function readmeExample(name: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const m = new RegExp(`<!-- example:${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\`\`\`\\s*<!-- /example -->`).exec(readme);
  if (!m?.[1]) throw new Error(`README.md has no example "${name}"`);
  return m[1];
}
