// `npm run crds`: writes crds/<group>_<plural>.yaml from the zod schemas and removes files of kinds that are gone.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCrds } from './render.ts';
import { GROUP } from './schema/index.ts';

const dir = import.meta.dirname;
const files = renderCrds();
for (const [name, text] of files) writeFileSync(join(dir, name), text);
for (const name of readdirSync(dir)) {
  if (name.startsWith(`${GROUP}_`) && name.endsWith('.yaml') && !files.has(name)) {
    rmSync(join(dir, name));
    console.log(`removed crds/${name}`);
  }
}
console.log(`wrote ${[...files.keys()].map((n) => `crds/${n}`).join(', ')}`);
