// The clouds' target fields and credentials (docs/clouds.md): what the compiler accepts, refuses and seals.
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../config/manifests.ts';
import { credentialSecrets } from '../providers/types.ts';
import { compile } from './compile.ts';
import { Keyring, sealSnapshot, unsealSnapshot } from './sealed-credentials.ts';

const API = 'gateway.svc.dev/v1alpha1';
const route = (target: Record<string, unknown>) => ({
  apiVersion: API,
  kind: 'ModelRoute',
  metadata: { name: 'm' },
  spec: { pricing: { inputPerMTokUsd: 1 }, targets: [{ name: 't', ...target }] },
});
const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

function compileDocs(docs: object[]) {
  const { set, errors } = parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc })));
  expect(errors).toEqual([]);
  return compile(set, { pepper: 'p' });
}

describe('cloud targets', () => {
  it('carries region, project and apiVersion, and the ambient credential, to the snapshot', () => {
    const { snapshot, problems } = compileDocs([
      route({ provider: 'vertex', region: 'global', project: 'my-project', upstreamModel: 'gemini-2.5-flash', credentials: { ambient: {} } }),
    ]);
    expect(problems).toEqual([]);
    expect(snapshot.models.m?.targets[0]).toMatchObject({
      provider: 'vertex',
      region: 'global',
      project: 'my-project',
      baseUrl: null,
      credential: { kind: 'ambient' },
    });
  });

  it('leaves out a target without what its kind needs, naming the field, as a problem that stops a standalone start', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ provider: 'bedrock' }, 'spec.targets[0].region', 'provider bedrock needs a region'],
      [{ provider: 'vertex', region: 'us-central1' }, 'spec.targets[0].project', 'provider vertex needs a project'],
      [{ provider: 'azure-openai' }, 'spec.targets[0].baseUrl', 'provider azure-openai needs a baseUrl'],
      [{ provider: 'openai', baseUrl: 'https://x.test/v1', credentials: { ambient: {} } }, 'spec.targets[0].credentials.ambient', 'cloud providers only'],
      [
        { provider: 'bedrock', region: 'us-east-1', credentials: { ambient: {}, env: 'K' } },
        'spec.targets[0].credentials',
        'one of secretKeyRef, env, ambient',
      ],
    ];
    for (const [target, field, message] of cases) {
      const { snapshot, problems } = compileDocs([route(target)]);
      expect(snapshot.models.m?.targets).toEqual([]);
      expect(problems).toHaveLength(1);
      expect(problems[0]?.field).toBe(field);
      expect(problems[0]?.message).toContain(message);
      // Not a warning: a standalone gateway refuses to start on it, as the CRD refuses it in a cluster.
      expect(problems[0]?.leftOut).toBeUndefined();
    }
  });

  it('reads a whole Secret for azure-openai with an api-key or a service principal, and refuses one with neither', () => {
    const az = (name: string) => route({ provider: 'azure-openai', baseUrl: 'https://r.openai.azure.com', credentials: { secretKeyRef: { name } } });
    const sp = { AZURE_TENANT_ID: 't', AZURE_CLIENT_ID: 'c', AZURE_CLIENT_SECRET: 's' };
    expect(compileDocs([az('key'), secret('key', { 'api-key': 'k' })]).problems).toEqual([]);
    expect(compileDocs([az('sp'), secret('sp', sp)]).problems).toEqual([]);
    const { snapshot, problems } = compileDocs([az('half'), secret('half', { AZURE_TENANT_ID: 't', AZURE_CLIENT_ID: 'c' })]);
    expect(snapshot.models.m?.targets).toEqual([]);
    expect(problems).toMatchObject([
      { field: 'spec.targets[0].credentials.secretKeyRef', message: 'target t: Secret half has neither api-key nor AZURE_CLIENT_SECRET' },
    ]);
  });

  it('reads a whole Secret for a cloud (a key pair), refuses it for an API-key provider, and seals it in the snapshot', () => {
    const keys = { AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEKEYID0001', AWS_SECRET_ACCESS_KEY: 'secret/example+key/0123456789abcdefghij' };
    const { snapshot, problems } = compileDocs([
      route({ provider: 'bedrock', region: 'us-east-1', credentials: { secretKeyRef: { name: 'aws' } } }),
      secret('aws', keys),
    ]);
    expect(problems).toEqual([]);
    const target = snapshot.models.m?.targets[0];
    expect(target?.credential.kind).toBe('bundle');
    expect(credentialSecrets(target as NonNullable<typeof target>).sort()).toEqual(Object.values(keys).sort());
    const ring = new Keyring([Buffer.alloc(32, 7)]);
    const sealed = sealSnapshot(snapshot, ring);
    const text = JSON.stringify(sealed);
    for (const v of Object.values(keys)) expect(text).not.toContain(v);
    expect(unsealSnapshot(sealed, ring)).toEqual(snapshot);

    const refused = compileDocs([
      route({ provider: 'openai', baseUrl: 'https://x.test/v1', credentials: { secretKeyRef: { name: 'aws' } } }),
      secret('aws', keys),
    ]);
    expect(refused.problems[0]?.message).toContain('provider openai needs secretKeyRef.key');
  });
});
