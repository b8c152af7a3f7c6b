// The CRD validation fixtures: crds/fixtures/valid/*.yaml must be accepted; each crds/fixtures/invalid/<name>.yaml
// must be refused with exactly the text of its sibling <name>.expected (kubectl's stderr, as users see it),
// compared line by line without trailing blanks (kubectl ends a header line with one; editors strip it).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export const FIXTURES = join(import.meta.dirname, '..', '..', 'crds', 'fixtures');

export interface Fixture {
  name: string;
  yaml: string;
  doc: { kind: string; metadata: { name: string }; spec: unknown };
}

export interface InvalidFixture extends Fixture {
  /** null when the .expected file is missing: the test then fails and prints what kubectl said. */
  expected: string | null;
}

export function normalize(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .trimEnd();
}

function load(dir: string): Fixture[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const yaml = readFileSync(join(dir, f), 'utf8');
      return { name: f.replace(/\.yaml$/, ''), yaml, doc: parse(yaml) as Fixture['doc'] };
    });
}

export function validFixtures(): Fixture[] {
  return load(join(FIXTURES, 'valid'));
}

export function invalidFixtures(): InvalidFixture[] {
  const dir = join(FIXTURES, 'invalid');
  return load(dir).map((f) => {
    const path = join(dir, `${f.name}.expected`);
    return { ...f, expected: existsSync(path) ? normalize(readFileSync(path, 'utf8')) : null };
  });
}
