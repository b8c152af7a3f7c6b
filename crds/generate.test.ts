// The committed CRDs must be exactly what the zod schemas generate: run `npm run crds` after changing a schema.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderCrds } from './render.ts';
import { GROUP } from './schema/index.ts';

const dir = import.meta.dirname;
const files = renderCrds();

describe('crds/*.yaml', () => {
  it('has one committed file per kind and no other', () => {
    const committed = readdirSync(dir)
      .filter((f) => f.startsWith(`${GROUP}_`) && f.endsWith('.yaml'))
      .sort();
    expect(committed, 'stale CRDs: run `npm run crds`').toEqual([...files.keys()].sort());
  });

  it.each([...files.keys()])('%s is up to date with crds/schema (run `npm run crds` if not)', (name) => {
    expect(readFileSync(join(dir, name), 'utf8')).toBe(files.get(name));
  });

  it('is deterministic', () => {
    expect(renderCrds()).toEqual(files);
  });

  it('makes ApiKey revocation irreversible with a CEL transition rule', () => {
    const crd = parse(files.get(`${GROUP}_apikeys.yaml`) ?? '');
    const revoked = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.revoked;
    expect(revoked['x-kubernetes-validations']).toEqual([{ rule: 'self || !oldSelf', message: expect.stringContaining('cannot be un-revoked') }]);
  });
});
