// `npm run crds`: writes crds/<group>_<plural>.yaml from the zod schemas, and the same files into the Helm chart's
// crds/ folder (test/chart checks they are identical), and removes files of kinds that are gone.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { renderCrds } from './render.ts';
import { GROUP } from './schema/index.ts';

const dir = import.meta.dirname;
const root = join(dir, '..');
const files = renderCrds();
for (const target of [dir, join(root, 'charts', 'svc-gateway', 'crds')]) {
  for (const [name, text] of files) writeFileSync(join(target, name), text);
  for (const name of readdirSync(target)) {
    if (name.startsWith(`${GROUP}_`) && name.endsWith('.yaml') && !files.has(name)) {
      rmSync(join(target, name));
      console.log(`removed ${relative(root, join(target, name))}`);
    }
  }
  console.log(`wrote ${[...files.keys()].map((n) => relative(root, join(target, n))).join(', ')}`);
}
