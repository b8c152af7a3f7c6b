// The generated CRDs in a real kube-apiserver: valid manifests are accepted and defaulted as zod defaults them,
// invalid ones are refused with the exact message users see, revocation cannot be undone, kubectl get is useful.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS, type KindName } from '../../crds/schema/index.ts';
import { startControlPlane, type ControlPlane } from './control-plane.ts';
import { invalidFixtures, normalize, validFixtures } from './fixtures.ts';
import { installCrds } from './install-crds.ts';
import { createNamespace, kubectl, kubectlOk } from './kubectl.ts';
import { docExample } from '../helpers/docs.ts';

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
  await installCrds(cp);
}, 180_000);

afterAll(async () => {
  await cp?.stop();
});

describe('valid fixtures', () => {
  it.each(validFixtures())('$name is accepted and defaulted as the zod schema defaults it', async ({ yaml, doc }) => {
    const ns = await createNamespace(cp);
    await kubectlOk(cp, ['create', '-n', ns, '-f', '-'], yaml);
    const stored = JSON.parse(await kubectlOk(cp, ['get', '-n', ns, doc.kind, doc.metadata.name, '-o', 'json']));
    const parsed = KINDS[doc.kind as KindName].parse(doc) as { spec: unknown };
    expect(stored.spec).toEqual(parsed.spec);
  });
});

describe('invalid fixtures', () => {
  it.each(invalidFixtures())('$name is refused with the message of its .expected file', async ({ name, yaml, expected }) => {
    const ns = await createNamespace(cp);
    const r = await kubectl(cp, ['create', '-n', ns, '-f', '-'], yaml);
    expect(r.code, `${name} was accepted`).not.toBe(0);
    expect(expected, `crds/fixtures/invalid/${name}.expected is missing; kubectl said:\n${r.stderr}`).not.toBeNull();
    expect(normalize(r.stderr)).toBe(expected);
  });
});

describe('transition rules', () => {
  const key = (revoked: boolean): string =>
    JSON.stringify({ apiVersion: 'gateway.svc.dev/v1alpha1', kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'a', revoked } });

  it('lets a key be revoked but never un-revoked', async () => {
    const ns = await createNamespace(cp);
    await kubectlOk(cp, ['create', '-n', ns, '-f', '-'], key(false));
    await kubectlOk(cp, ['patch', '-n', ns, 'apikey', 'k', '--type=merge', '-p', '{"spec":{"revoked":true}}']);

    const back = await kubectl(cp, ['patch', '-n', ns, 'apikey', 'k', '--type=merge', '-p', '{"spec":{"revoked":false}}']);
    expect(back.code).not.toBe(0);
    expect(back.stderr.trimEnd()).toBe(
      'The ApiKey "k" is invalid: spec.revoked: Invalid value: "boolean": a revoked ApiKey cannot be un-revoked; create a new ApiKey instead',
    );
    // Dropping the field defaults it to false: refused the same way.
    const dropped = await kubectl(cp, ['patch', '-n', ns, 'apikey', 'k', '--type=json', '-p', '[{"op":"remove","path":"/spec/revoked"}]']);
    expect(dropped.stderr).toContain('a revoked ApiKey cannot be un-revoked');
    // So does re-applying an old manifest.
    const reapplied = await kubectl(cp, ['apply', '--server-side', '--force-conflicts', '-n', ns, '-f', '-'], key(false));
    expect(reapplied.stderr).toContain('a revoked ApiKey cannot be un-revoked');

    const stored = JSON.parse(await kubectlOk(cp, ['get', '-n', ns, 'apikey', 'k', '-o', 'json']));
    expect(stored.spec.revoked).toBe(true);
  });

  it('keeps credits append-only', async () => {
    const ns = await createNamespace(cp);
    const account = (credits: object[]): string =>
      JSON.stringify({
        apiVersion: 'gateway.svc.dev/v1alpha1',
        kind: 'Account',
        metadata: { name: 'a' },
        spec: { planRef: 'p', credits },
      });
    await kubectlOk(cp, ['create', '-n', ns, '-f', '-'], account([{ id: 'one', amountUsd: 10 }]));
    await kubectlOk(
      cp,
      ['replace', '-n', ns, '-f', '-'],
      account([
        { id: 'one', amountUsd: 10 },
        { id: 'two', amountUsd: 5 },
      ]),
    );

    const removed = await kubectl(cp, ['replace', '-n', ns, '-f', '-'], account([{ id: 'two', amountUsd: 5 }]));
    expect(removed.stderr.trimEnd()).toBe(
      'The Account "a" is invalid: spec.credits: Invalid value: "array": credits are append-only: a credit cannot be removed',
    );
    const changed = await kubectl(
      cp,
      ['replace', '-n', ns, '-f', '-'],
      account([
        { id: 'one', amountUsd: 99 },
        { id: 'two', amountUsd: 5 },
      ]),
    );
    expect(changed.stderr.trimEnd()).toBe(
      'The Account "a" is invalid: spec.credits[0]: Invalid value: "object": a credit cannot be changed once added; add a credit with a new id',
    );
  });
});

describe('kubectl get', () => {
  it('finds every kind by short name and by the svc-gateway category', async () => {
    const ns = await createNamespace(cp);
    for (const f of validFixtures()) await kubectlOk(cp, ['create', '-n', ns, '-f', '-'], f.yaml);
    const byShortName = await kubectlOk(cp, ['get', '-n', ns, 'pln,acct,ak,mr,inc,mcp,gr', '-o', 'name']);
    const byCategory = await kubectlOk(cp, ['get', '-n', ns, 'svc-gateway', '-o', 'name']);
    const expected = validFixtures()
      .map((f) => `${f.doc.kind.toLowerCase()}.gateway.svc.dev/${f.doc.metadata.name}`)
      .sort();
    expect(byShortName.trim().split('\n').sort()).toEqual(expected);
    expect(byCategory.trim().split('\n').sort()).toEqual(expected);
  });

  it('shows the columns of each kind', async () => {
    const ns = await createNamespace(cp);
    for (const f of validFixtures()) await kubectlOk(cp, ['create', '-n', ns, '-f', '-'], f.yaml);
    const header = async (resource: string): Promise<string[]> => (await kubectlOk(cp, ['get', '-n', ns, resource])).split('\n')[0]!.split(/\s{2,}/);
    expect(await header('apikeys')).toEqual(['NAME', 'STATE', 'KEY', 'ACCOUNT', 'BUDGET', 'SPEND', 'BUDGET%', 'AGE', 'EXPIRES']);
    expect(await header('plans')).toEqual(['NAME', 'TIER', 'ANTHROPIC', 'RPM', 'TPM', 'READY', 'AGE']);
    expect(await header('accounts')).toEqual(['NAME', 'PLAN', 'SPEND', 'BALANCE', 'READY', 'AGE']);
    expect(await header('modelroutes')).toEqual(['NAME', 'MODEL', 'TYPE', 'MIN TIER', 'INPUT $/MTOK', 'OUTPUT $/MTOK', 'READY', 'STATE', 'AGE']);
    expect(await header('incidents')).toEqual(['NAME', 'TITLE', 'MODELS', 'IMPACT', 'STATUS', 'AGE']);
    expect(await header('mcpservers')).toEqual(['NAME', 'URL', 'PREFIX', '$/CALL', 'READY', 'AGE']);
    const wide = (await kubectlOk(cp, ['get', '-n', ns, 'mcpservers', '-o', 'wide'])).split('\n');
    expect(wide[0]?.split(/\s{2,}/)).toEqual(['NAME', 'URL', 'TRANSPORT', 'PREFIX', '$/CALL', 'READY', 'AGE']);
    expect(
      wide
        .find((l) => l.startsWith('legacy-tools'))
        ?.split(/\s+/)
        .slice(0, 3),
    ).toEqual(['legacy-tools', 'https://tools.example.com/sse', 'sse']);
    const row = (await kubectlOk(cp, ['get', '-n', ns, 'apikey', 'ci-bot', '--no-headers'])).trim().split(/\s+/);
    expect(row.slice(0, 3)).toEqual(['ci-bot', 'acme', '25']); // State and Key are empty until the operator runs
  });
});

describe('docs/kubernetes.md', () => {
  it('its CRD example applies as written', async () => {
    const example = docExample('docs/kubernetes.md', 'crds');
    const ns = await createNamespace(cp);
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], example);
    const names = await kubectlOk(cp, ['get', '-n', ns, 'svc-gateway', '-o', 'name']);
    expect(names.trim().split('\n').sort()).toEqual([
      'account.gateway.svc.dev/acme',
      'apikey.gateway.svc.dev/ci-bot',
      'modelroute.gateway.svc.dev/mock-mini',
      'plan.gateway.svc.dev/builder',
    ]);
  });
});
