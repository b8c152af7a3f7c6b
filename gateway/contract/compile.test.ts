import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../config/manifests.ts';
import { readManifestFiles } from '../config/manifests.ts';
import { DEMO_CONFIG, loadStandaloneConfig } from '../config/standalone.ts';
import { compile } from './compile.ts';
import { generateKey, hashKey } from './keys.ts';

const API = 'gateway.svc.dev/v1alpha1';
const plan = { apiVersion: API, kind: 'Plan', metadata: { name: 'pro' }, spec: { tier: 2, limits: { rpm: 100, tpm: 5000 } } };
const acct = { apiVersion: API, kind: 'Account', metadata: { name: 'acme' }, spec: { planRef: 'pro', credits: [{ id: 'c1', amountUsd: 2.5 }] } };
const routeDoc = {
  apiVersion: API,
  kind: 'ModelRoute',
  metadata: { name: 'gpt' },
  spec: {
    pricing: { inputPerMTokUsd: 0.156, outputPerMTokUsd: 0.624 },
    targets: [{ name: 'oa', provider: 'openai', baseUrl: 'https://api.example.test/v1/', credentials: { secretKeyRef: { name: 'upstream', key: 'token' } } }],
  },
};
const upstreamSecret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'upstream' }, data: { token: Buffer.from('upstream-token').toString('base64') } };

function parse(docs: object[]) {
  return parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc })));
}

describe('compile', () => {
  it('compiles prices to integer nano-USD per token, trims baseUrl, resolves Secret data', () => {
    const { set, errors } = parse([plan, acct, routeDoc, upstreamSecret]);
    expect(errors).toEqual([]);
    const { snapshot, problems } = compile(set, { pepper: 'p' });
    expect(problems).toEqual([]);
    expect(snapshot.models.gpt).toMatchObject({ inputNanoPerToken: 156, outputNanoPerToken: 624, maxOutputTokens: 4096, type: 'chat', minTier: 0 });
    expect(snapshot.models.gpt?.targets[0]).toMatchObject({
      baseUrl: 'https://api.example.test/v1',
      upstreamModel: 'gpt',
      credential: { kind: 'value', value: 'upstream-token' },
    });
    expect(snapshot.accounts.acme).toEqual({ name: 'acme', plan: 'pro', trialCreditNano: 1_000_000_000, credits: [{ id: 'c1', amountNano: 2_500_000_000 }] });
  });

  it('takes a key made in the console from its HMAC (spec.keyHash): no Secret, no key, no generation', () => {
    const key = generateKey();
    const hashed = {
      apiVersion: API,
      kind: 'ApiKey',
      metadata: { name: 'made' },
      spec: { accountRef: 'acme', keyHash: hashKey(key, 'p'), displayedKey: `sk-svc-…${key.slice(-4)}`, limits: { rpm: 500 } },
    };
    let generated = 0;
    const { keys, problems } = compile(parse([plan, acct, hashed]).set, { pepper: 'p', keyFor: () => (generated++, generateKey()) });
    expect(problems).toEqual([]);
    expect(generated).toBe(0);
    expect(keys).toEqual([
      {
        hash: hashKey(key, 'p'),
        name: 'made',
        display: `sk-svc-…${key.slice(-4)}`,
        account: 'acme',
        monthlyBudgetNano: null,
        rpm: 100,
        tpm: 5000,
        models: null,
        revoked: false,
      },
    ]);
  });

  it("carries a key's expiry and creation into its record; keyPolicy.maxKeyAgeDays ends it earlier; requireExpiry refuses a key without one", () => {
    const key = generateKey();
    const k = (name: string, account: string, spec: object, created?: string): object => ({
      apiVersion: API,
      kind: 'ApiKey',
      metadata: { name, ...(created ? { creationTimestamp: created } : {}) },
      spec: { accountRef: account, keyHash: hashKey(`${key}${name}`, 'p'), ...spec },
    });
    const strict = { ...acct, metadata: { name: 'strict' }, spec: { planRef: 'pro', keyPolicy: { maxKeyAgeDays: 30, requireExpiry: true } } };
    const aged = { ...acct, metadata: { name: 'aged' }, spec: { planRef: 'pro', keyPolicy: { maxKeyAgeDays: 30 } } };
    const docs = [
      plan,
      acct,
      strict,
      aged,
      k('plain', 'acme', { expiresAt: '2027-01-01T00:00:00+01:00' }, '2026-11-01T00:00:00Z'),
      k('no-expiry', 'strict', {}, '2026-11-01T00:00:00Z'),
      k('long', 'strict', { expiresAt: '2027-06-01T00:00:00Z' }, '2026-11-01T00:00:00Z'),
      k('capped', 'aged', {}, '2026-11-01T00:00:00Z'),
      k('from-file', 'aged', {}),
    ];
    const { keys, problems, verdicts } = compile(parse(docs).set, { pepper: 'p' });
    const rec = (name: string): object | undefined => keys.find((x) => x.name === name);
    expect(rec('plain')).toMatchObject({ expiresAt: Date.parse('2026-12-31T23:00:00Z'), createdAt: Date.parse('2026-11-01T00:00:00Z') });
    expect(rec('long')).toMatchObject({ expiresAt: Date.parse('2026-12-01T00:00:00Z') }); // 30 days after creation
    expect(rec('capped')).toMatchObject({ expiresAt: Date.parse('2026-12-01T00:00:00Z') });
    expect(rec('from-file')).not.toHaveProperty('expiresAt'); // no creation time in a file: nothing to count from
    expect(rec('no-expiry')).toBeUndefined();
    expect(verdicts.apiKeys['no-expiry']).toEqual({
      ready: false,
      served: false,
      reason: 'KeyPolicy',
      message:
        'Account strict has keyPolicy.requireExpiry: set spec.expiresAt on this key (RFC 3339, at most 30 days after its creation); until then no gateway accepts it.',
    });
    expect(problems).toEqual([{ object: 'ApiKey/no-expiry', field: 'spec.expiresAt', message: verdicts.apiKeys['no-expiry']?.message }]);
  });

  it('is deterministic: the same manifests in any order give the same version', () => {
    const a = compile(parse([plan, acct, routeDoc, upstreamSecret]).set, { pepper: 'p' }).snapshot;
    const b = compile(parse([upstreamSecret, routeDoc, acct, plan]).set, { pepper: 'p' }).snapshot;
    expect(a.version).toBe(b.version);
    const c = compile(parse([plan, acct, { ...routeDoc, spec: { ...routeDoc.spec, pricing: { inputPerMTokUsd: 1 } } }, upstreamSecret]).set, {
      pepper: 'p',
    }).snapshot;
    expect(c.version).not.toBe(a.version);
  });

  it('caps key limits by the plan and stores only the HMAC of the key', () => {
    const key = generateKey();
    const docs = [
      plan,
      acct,
      { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme', limits: { rpm: 1000 }, monthlyBudgetUsd: 3, models: ['gpt*'] } },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k-key' }, stringData: { key: `${key}\n` } },
    ];
    const { keys, problems } = compile(parse(docs).set, { pepper: 'p' });
    expect(problems).toEqual([]);
    expect(keys).toEqual([
      {
        hash: hashKey(key, 'p'),
        name: 'k',
        display: `sk-svc-…${key.slice(-4)}`,
        account: 'acme',
        monthlyBudgetNano: 3_000_000_000,
        rpm: 100,
        tpm: 5000,
        models: ['gpt*'],
        revoked: false,
      },
    ]);
    expect(JSON.stringify(keys)).not.toContain(key.slice(7));
  });

  it.each([
    ['an unknown plan', [{ ...acct, spec: { planRef: 'nope' } }], 'Account/acme', 'spec.planRef'],
    [
      'an unknown account',
      [plan, acct, { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'ghost' } }],
      'ApiKey/k',
      'spec.accountRef',
    ],
    ['a missing credential Secret', [routeDoc], 'ModelRoute/gpt', 'spec.targets[0].credentials.secretKeyRef'],
    ['an unknown fallback', [{ ...routeDoc, spec: { ...routeDoc.spec, fallbacks: ['ghost'] } }, upstreamSecret], 'ModelRoute/gpt', 'spec.fallbacks[0]'],
    [
      'a search-unit price on a chat model',
      [{ ...routeDoc, spec: { ...routeDoc.spec, pricing: { ...routeDoc.spec.pricing, perSearchUnitUsd: 0.002 } } }, upstreamSecret],
      'ModelRoute/gpt',
      'spec.pricing.perSearchUnitUsd',
    ],
    ['fim on a chat model', [{ ...routeDoc, spec: { ...routeDoc.spec, fim: true } }, upstreamSecret], 'ModelRoute/gpt', 'spec.fim'],
    [
      'a per-minute price on a chat model',
      [{ ...routeDoc, spec: { ...routeDoc.spec, pricing: { ...routeDoc.spec.pricing, perMinuteUsd: 0.006 } } }, upstreamSecret],
      'ModelRoute/gpt',
      'spec.pricing.perMinuteUsd',
    ],
    [
      'a per-character price on a transcription model',
      [{ ...routeDoc, spec: { ...routeDoc.spec, type: 'transcription', pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 } } }, upstreamSecret],
      'ModelRoute/gpt',
      'spec.pricing.perMCharactersUsd',
    ],
    [
      'an audio-token price on a speech model',
      [{ ...routeDoc, spec: { ...routeDoc.spec, type: 'speech', pricing: { inputPerMTokUsd: 0, audioInputPerMTokUsd: 6 } } }, upstreamSecret],
      'ModelRoute/gpt',
      'spec.pricing.audioInputPerMTokUsd',
    ],
    [
      'an output price on a rerank',
      [{ ...routeDoc, spec: { ...routeDoc.spec, type: 'rerank', pricing: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } } }, upstreamSecret],
      'ModelRoute/gpt',
      'spec.pricing.outputPerMTokUsd',
    ],
    [
      'rerankApi on a target that is not openai',
      [
        {
          ...routeDoc,
          spec: {
            ...routeDoc.spec,
            type: 'rerank',
            pricing: { inputPerMTokUsd: 0 },
            targets: [{ name: 'b', provider: 'bedrock', region: 'us-west-2', upstreamModel: 'amazon.rerank-v1:0', rerankApi: 'voyage' }],
          },
        },
      ],
      'ModelRoute/gpt',
      'spec.targets[0].rerankApi',
    ],
    [
      'a malformed key in a Secret',
      [
        plan,
        acct,
        { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme' } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'k-key' }, stringData: { key: 'sk-svc-nope' } },
      ],
      'ApiKey/k',
      'spec.secretName',
    ],
    [
      'an openai target without baseUrl',
      [{ ...routeDoc, spec: { ...routeDoc.spec, targets: [{ name: 'x', provider: 'openai' }] } }],
      'ModelRoute/gpt',
      'spec.targets[0].baseUrl',
    ],
    [
      'a duplicate credit id',
      [
        plan,
        {
          ...acct,
          spec: {
            planRef: 'pro',
            credits: [
              { id: 'a', amountUsd: 1 },
              { id: 'a', amountUsd: 2 },
            ],
          },
        },
      ],
      'Account/acme',
      'spec.credits[1].id',
    ],
  ])('reports %s, naming the object and the field', (_n, docs, object, field) => {
    const { set, errors } = parse(docs as object[]);
    expect(errors).toEqual([]);
    const { problems } = compile(set, { pepper: 'p' });
    expect(problems).toContainEqual(expect.objectContaining({ object, field }));
  });
});

describe('compile verdicts', () => {
  const mockTarget = { name: 'spare', provider: 'mock' };
  const twoTargets = { ...routeDoc, spec: { ...routeDoc.spec, targets: [...routeDoc.spec.targets, mockTarget] } };
  const verdicts = (docs: object[], scope?: string) => compile(parse(docs).set, { pepper: 'p', scope });

  it("leaves out a target whose credentials Secret is missing; the route's other targets serve", () => {
    const { snapshot, verdicts: v, problems } = verdicts([twoTargets], 'namespace ns');
    expect(snapshot.models.gpt?.targets.map((t) => t.name)).toEqual(['spare']);
    expect(v.modelRoutes.gpt).toEqual({
      ready: false,
      served: true,
      reason: 'MissingSecret',
      message: 'Target oa: Secret upstream does not exist in namespace ns. It is left out: 1 of 2 targets serve model gpt.',
      targets: [
        { name: 'oa', ready: false, served: false, reason: 'MissingSecret', message: 'Target oa: Secret upstream does not exist in namespace ns.' },
        { name: 'spare', ready: true, served: true, reason: 'Accepted', message: 'Target spare is published.' },
      ],
    });
    expect(problems).toEqual([expect.objectContaining({ object: 'ModelRoute/gpt', field: 'spec.targets[0].credentials.secretKeyRef', leftOut: 'target' })]);
  });

  it('keeps a route with no target left in the snapshot, with no targets, and says calls get 503', () => {
    const wrongKey = { ...upstreamSecret, data: { other: Buffer.from('x').toString('base64') } };
    const { snapshot, verdicts: v } = verdicts([routeDoc, wrongKey]);
    expect(snapshot.models.gpt?.targets).toEqual([]);
    expect(v.modelRoutes.gpt).toMatchObject({
      ready: false,
      served: false,
      reason: 'MissingSecretKey',
      message: 'Target oa: Secret upstream has no key token. No target is left: calls to model gpt get 503 no_target_available.',
    });
    const fixed = verdicts([routeDoc, upstreamSecret]);
    expect(fixed.verdicts.modelRoutes.gpt).toMatchObject({
      ready: true,
      served: true,
      reason: 'Accepted',
      message: 'Model gpt is published to the gateways with 1 target(s).',
    });
    expect(fixed.snapshot.models.gpt?.targets.map((t) => t.name)).toEqual(['oa']);
  });

  it('says which of two routes publishing one model id is not served, and names an unknown fallback', () => {
    const a = { ...routeDoc, metadata: { name: 'a' }, spec: { ...routeDoc.spec, model: 'same', targets: [mockTarget] } };
    const b = { ...a, metadata: { name: 'b' }, spec: { ...a.spec, fallbacks: ['ghost'] } };
    const { verdicts: v } = verdicts([b, a]);
    expect(v.modelRoutes.a).toMatchObject({
      ready: false,
      served: false,
      reason: 'DuplicateModel',
      message: 'ModelRoute b publishes model same in its place.',
    });
    expect(v.modelRoutes.b).toMatchObject({ ready: false, served: true, reason: 'UnknownFallback', message: 'No ModelRoute publishes fallback model ghost.' });
  });

  it.each([
    [
      'an account without its plan',
      [acct],
      'accounts',
      'acme',
      { ready: false, served: false, reason: 'UnknownPlan', message: 'Plan pro does not exist in namespace ns.' },
    ],
    ['an account on a known plan', [plan, acct], 'accounts', 'acme', { ready: true, served: true, reason: 'Accepted' }],
    ['a plan', [plan], 'plans', 'pro', { ready: true, served: true, reason: 'Accepted', message: 'Tier 2 is published to the gateways.' }],
    [
      'a key without its account',
      [{ apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'ghost' } }],
      'apiKeys',
      'k',
      { ready: false, served: false, reason: 'UnknownAccount', message: 'Account ghost does not exist in namespace ns.' },
    ],
    [
      'a key whose account has no plan',
      [acct, { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme' } }],
      'apiKeys',
      'k',
      { ready: false, served: false, reason: 'UnknownPlan', message: 'Plan pro of Account acme does not exist in namespace ns.' },
    ],
    [
      'a key whose Secret holds none',
      [plan, acct, { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme' } }],
      'apiKeys',
      'k',
      { ready: false, served: false, reason: 'MissingSecret', message: 'Secret k-key holds no key.' },
    ],
    [
      'a revoked key',
      [plan, acct, { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme', revoked: true } }],
      'apiKeys',
      'k',
      { ready: true, reason: 'Revoked' },
    ],
  ] as const)('judges %s', (_n, docs, table, name, expected) => {
    expect(verdicts(docs as unknown as object[], 'namespace ns').verdicts[table][name]).toMatchObject(expected);
  });
});

describe('manifests', () => {
  it('drops unknown fields with a warning and rejects wrong types naming the field', () => {
    const r = parse([
      { ...plan, spec: { ...plan.spec, colour: 'blue' } },
      { ...acct, spec: { planRef: 7 } },
    ]);
    expect(r.warnings).toEqual([{ source: 't#0', object: 'Plan/pro', field: 'spec.colour', message: 'unknown field dropped' }]);
    expect(r.errors).toEqual([expect.objectContaining({ source: 't#1', object: 'Account/acme', field: 'spec.planRef' })]);
  });

  it('compiles spec.cache (hitCostFraction in millionths) and refuses a bad one naming the field', () => {
    const cached = { ...routeDoc, spec: { ...routeDoc.spec, cache: { ttlSeconds: 60, hitCostFraction: 0.25 } } };
    const r = parse([plan, acct, cached, upstreamSecret]);
    expect(r.errors).toEqual([]);
    const c = compile(r.set, { pepper: 'p' });
    expect(c.snapshot.models.gpt?.cache).toEqual({ ttlSeconds: 60, maxEntryBytes: 262_144, hitCostPpm: 250_000, allowSampling: false });
    expect(compile(parse([plan, acct, routeDoc, upstreamSecret]).set, { pepper: 'p' }).snapshot.models.gpt?.cache).toBeUndefined();
    const bad = (cache: object): Array<{ field: string }> => parse([{ ...routeDoc, spec: { ...routeDoc.spec, cache } }]).errors;
    expect(bad({ hitCostFraction: 1.5 })).toEqual([expect.objectContaining({ object: 'ModelRoute/gpt', field: 'spec.cache.hitCostFraction' })]);
    expect(bad({ ttlSeconds: 0 })).toEqual([expect.objectContaining({ field: 'spec.cache.ttlSeconds' })]);
    expect(bad({ maxEntryBytes: -1 })).toEqual([expect.objectContaining({ field: 'spec.cache.maxEntryBytes' })]);
    expect(bad({ maxEntryBytes: 8 * 1024 * 1024 + 1 })).toEqual([expect.objectContaining({ field: 'spec.cache.maxEntryBytes' })]);
    expect(bad({ allowSampling: 'yes' })).toEqual([expect.objectContaining({ field: 'spec.cache.allowSampling' })]);
  });

  it('ignores kinds it does not use, with a warning', () => {
    const r = parse([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }]);
    expect(r.errors).toEqual([]);
    expect(r.warnings[0]?.message).toContain('not used');
  });

  it('loads the shipped demo config: two plans, two accounts, a key for each, mock models', () => {
    const c = loadStandaloneConfig(undefined, 'p');
    expect(Object.keys(c.snapshot.plans).sort()).toEqual(['builder', 'free']);
    expect(c.generated.map((g) => g.apiKey).sort()).toEqual(['demo-builder', 'demo-free']);
    expect(Object.values(c.snapshot.models).every((m) => m.targets.every((t) => t.provider === 'mock'))).toBe(true);
    expect(readManifestFiles(DEMO_CONFIG).errors).toEqual([]);
  });

  it("starts standalone with a warning when a target's credentials Secret is missing; the target is not served", () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    const file = join(dir, 'route.yaml');
    writeFileSync(
      file,
      [plan, acct, { ...routeDoc, spec: { ...routeDoc.spec, targets: [...routeDoc.spec.targets, { name: 'spare', provider: 'mock' }] } }]
        .map((d) => JSON.stringify(d))
        .join('\n---\n'),
    );
    const c = loadStandaloneConfig(file, 'p');
    expect(c.snapshot.models.gpt?.targets.map((t) => t.name)).toEqual(['spare']);
    expect(c.warnings).toEqual([
      {
        source: file,
        object: 'ModelRoute/gpt',
        field: 'spec.targets[0].credentials.secretKeyRef',
        message: 'target oa: Secret upstream does not exist; the target is not served',
      },
    ]);
    // Other problems still refuse to start.
    writeFileSync(file, JSON.stringify(acct));
    expect(() => loadStandaloneConfig(file, 'p')).toThrow(/Account\/acme field spec\.planRef: unknown Plan pro/);
  });

  it('reads a folder of YAML files in name order, several documents per file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cfg-'));
    writeFileSync(join(dir, 'b.yaml'), 'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: b}\n');
    writeFileSync(
      join(dir, 'a.yml'),
      'apiVersion: gateway.svc.dev/v1alpha1\nkind: Plan\nmetadata: {name: p}\nspec: {tier: 0}\n---\napiVersion: gateway.svc.dev/v1alpha1\nkind: Plan\nmetadata: {name: q}\nspec: {tier: 1}\n',
    );
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    const r = readManifestFiles(dir);
    expect(r.errors).toEqual([]);
    expect(r.docs.map((d) => d.source)).toEqual([join(dir, 'a.yml#1'), join(dir, 'a.yml#2'), join(dir, 'b.yaml')]);
  });
});
