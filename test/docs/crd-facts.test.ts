// What the docs say about the custom resources follows crds/crd-kinds.ts, from which the CRDs are generated: how many
// kinds there are (a page that counts them in words), the kinds the chart README's table names, and the columns of
// every `kubectl get` sample (each kind's printer columns, `-o wide` adding those of priority 1).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRD_KINDS, type CrdKind } from '../../crds/crd-kinds.ts';
import { ROOT } from '../helpers/process.ts';
import { docPages } from './links.ts';

const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const text = (page: string): string => readFileSync(join(ROOT, page), 'utf8');

/** Every "four CRDs", "the 5 kinds", "three custom resources" of a page, with the number it says. */
export function kindCounts(page: string): Array<{ said: string; n: number }> {
  const re = /\b(zero|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:CRDs|kinds|custom resources|custom resource definitions)\b/gi;
  return [...page.matchAll(re)].map((m) => {
    const word = (m[1] as string).toLowerCase();
    return { said: m[0], n: /^\d+$/.test(word) ? Number(word) : NUMBERS.indexOf(word) };
  });
}

/** The header kubectl prints for `kind` (its printer columns in order, upper case; `wide` adds priority 1). */
function header(kind: CrdKind, wide: boolean): string[] {
  return ['NAME', ...kind.columns.filter((c) => (c.priority ?? 0) === 0 || wide).map((c) => c.name.toUpperCase())];
}

function kindNamed(resource: string): CrdKind | undefined {
  return CRD_KINDS.find((k) => [k.plural, k.singular, k.kind.toLowerCase(), ...k.shortNames].includes(resource.toLowerCase()));
}

/** Each header line of a `$ kubectl get ...` sample, with the kind its rows are of and what kubectl would print. */
export function kubectlHeaders(page: string): Array<{ at: string; got: string[]; want: string[] }> {
  const out: Array<{ at: string; got: string[]; want: string[] }> = [];
  let command: { resource: string; wide: boolean } | undefined;
  const lines = page.split('\n');
  lines.forEach((line, i) => {
    const cmd = /^\$ kubectl get (\S+)(.*)$/.exec(line);
    if (cmd) command = { resource: cmd[1] as string, wide: /-o wide\b/.test(cmd[2] as string) };
    else if (line.startsWith('$ ') || line.startsWith('```')) command = undefined;
    if (!command || !line.startsWith('NAME ')) return;
    // `kubectl get <category>` prints several kinds, each row named <singular>.<group>/<name>.
    const row = /^(\w+)\.gateway\.svc\.dev\//.exec(lines[i + 1] ?? '');
    const kind = kindNamed(row ? (row[1] as string) : command.resource);
    if (!kind) return;
    out.push({ at: `line ${i + 1} (${kind.kind})`, got: line.trim().split(/\s{2,}/), want: header(kind, command.wide) });
  });
  return out;
}

describe('the docs on the custom resources follow crds/crd-kinds.ts', () => {
  it.each(docPages(ROOT))('%s: every count of the kinds is the number of kinds', (page) => {
    for (const c of kindCounts(text(page))) expect(c, page).toEqual({ said: c.said, n: CRD_KINDS.length });
  });

  it("the chart README's CRDs row names every kind", () => {
    const row = /^\| CRDs \|([^|]*)\|/m.exec(text('charts/svc-gateway/README.md'))?.[1] ?? '';
    expect([...row.matchAll(/`(\w+)`/g)].map((m) => m[1])).toEqual(CRD_KINDS.map((k) => k.kind));
  });

  it('every `kubectl get` sample shows the columns kubectl prints for its kind', () => {
    const samples = docPages(ROOT).flatMap((page) => kubectlHeaders(text(page)).map((h) => ({ ...h, at: `${page} ${h.at}` })));
    expect(samples.length).toBeGreaterThanOrEqual(CRD_KINDS.length - 1);
    for (const s of samples) expect(s.got, s.at).toEqual(s.want);
  });

  it('finds counts and headers as written, and the kind of each header', () => {
    expect(kindCounts('apply the four CRDs, then the 5 kinds; two custom resources')).toEqual([
      { said: 'four CRDs', n: 4 },
      { said: '5 kinds', n: 5 },
      { said: 'two custom resources', n: 2 },
    ]);
    const sample = [
      '$ kubectl get svc-gateway -n ns',
      'NAME                 TIER   ANTHROPIC   RPM   TPM   READY   AGE',
      'plan.gateway.svc.dev/builder   2   true   600   200000   True   2s',
      '$ kubectl get ak -o wide',
      'NAME   STATE   KEY',
      '$ kubectl get events',
      'NAME   TYPE',
    ].join('\n');
    const [plan, key, ...rest] = kubectlHeaders(sample);
    expect(rest).toEqual([]);
    expect(plan).toEqual({
      at: 'line 2 (Plan)',
      got: ['NAME', 'TIER', 'ANTHROPIC', 'RPM', 'TPM', 'READY', 'AGE'],
      want: ['NAME', 'TIER', 'ANTHROPIC', 'RPM', 'TPM', 'READY', 'AGE'],
    });
    expect(key?.at).toBe('line 5 (ApiKey)');
    expect(key?.want).toContain('SECRET');
  });
});
