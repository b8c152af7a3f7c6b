// Manifest files read one document at a time: the same documents, sources and syntax errors as a whole-file parse.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readManifestFiles } from './manifests.ts';

function file(text: string): string {
  const f = join(mkdtempSync(join(tmpdir(), 'svc-manifests-')), 'c.yaml');
  writeFileSync(f, text);
  return f;
}

describe('readManifestFiles', () => {
  it('reads every document of a file, each named by its place', () => {
    const text = 'kind: Plan\nmetadata: {name: a}\n---\n# a comment only\n---\nkind: Account\nmetadata:\n  name: b\n';
    const f = file(text);
    const r = readManifestFiles(f);
    expect(r.errors).toEqual([]);
    expect(r.docs).toEqual(parseAllDocuments(text).map((d, i) => ({ source: `${f}#${i + 1}`, doc: d.toJS() as unknown })));
    expect(r.docs.map((d) => d.doc)).toEqual([{ kind: 'Plan', metadata: { name: 'a' } }, null, { kind: 'Account', metadata: { name: 'b' } }]);
  });

  it('names a lone document by its file, and reads an empty file as none', () => {
    const f = file('kind: Plan\n');
    expect(readManifestFiles(f).docs).toEqual([{ source: f, doc: { kind: 'Plan' } }]);
    expect(readManifestFiles(file(''))).toEqual({ docs: [], errors: [] });
  });

  it('reports a syntax error with its line, and still reads the other documents', () => {
    const text = 'kind: Plan\n---\nkind: [unclosed\n---\nkind: Account\n';
    const f = file(text);
    const r = readManifestFiles(f);
    expect(r.docs.map((d) => d.doc)).toEqual([{ kind: 'Plan' }, { kind: 'Account' }]);
    expect(r.errors.length).toBeGreaterThan(0);
    expect(r.errors[0]?.source).toBe(`${f}#2`);
    // The whole-file parser's message, with line and column.
    expect(r.errors.map((e) => e.message)).toEqual(parseAllDocuments(text).flatMap((d) => d.errors.map((e) => e.message)));
    expect(r.errors[0]?.message).toMatch(/at line \d+, column \d+/);
  });
});
