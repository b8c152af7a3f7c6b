// Where the program's own code is: every top-level folder holding TypeScript, but the tests, the docs' generator and
// what npm installs. A folder added later (a new process, a new domain) is found without a list to keep up.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const NOT_CODE = new Set(['test', 'docs', 'node_modules', 'coverage']);

export function codeDirs(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !NOT_CODE.has(e.name))
    .map((e) => e.name)
    .filter((dir) => (readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }) as string[]).some((f) => f.endsWith('.ts')))
    .sort();
}
