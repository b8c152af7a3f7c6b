// Records what kubectl says for each invalid CRD fixture that has no .expected file yet (--all: every fixture),
// so adding a fixture is: write the YAML, run this, read the message, commit both.
//   node test/k8s/record-expected.ts [--all]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startControlPlane } from './control-plane.ts';
import { FIXTURES, invalidFixtures, normalize } from './fixtures.ts';
import { installCrds } from './install-crds.ts';
import { createNamespace, kubectl } from './kubectl.ts';

const all = process.argv.includes('--all');
const todo = invalidFixtures().filter((f) => all || f.expected === null);
if (todo.length === 0) {
  console.log('every invalid fixture has its .expected file (--all re-records them)');
} else {
  const cp = await startControlPlane();
  try {
    await installCrds(cp);
    for (const f of todo) {
      const r = await kubectl(cp, ['create', '-n', await createNamespace(cp), '-f', '-'], f.yaml);
      if (r.code === 0) {
        console.error(`crds/fixtures/invalid/${f.name}.yaml was ACCEPTED: it is not an invalid fixture`);
        process.exitCode = 1;
        continue;
      }
      writeFileSync(join(FIXTURES, 'invalid', `${f.name}.expected`), `${normalize(r.stderr)}\n`);
      console.log(`${f.name}.expected: ${normalize(r.stderr)}`);
    }
  } finally {
    await cp.stop();
  }
}
