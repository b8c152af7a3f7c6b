// The responsesApi flag of ModelRoute targets: compiled for openai targets only, absent otherwise (so snapshots of
// configs that do not use it keep their content and version), refused for other providers naming the field.
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../config/manifests.ts';
import { compile } from './compile.ts';

const API = 'gateway.svc.dev/v1alpha1';

function compiled(target: Record<string, unknown>): ReturnType<typeof compile> {
  const route = { apiVersion: API, kind: 'ModelRoute', metadata: { name: 'm' }, spec: { pricing: { inputPerMTokUsd: 1 }, targets: [target] } };
  const { set, errors } = parseManifests([{ source: 't#0', doc: route }]);
  expect(errors).toEqual([]);
  return compile(set, { pepper: 'p' });
}

describe('compile: responsesApi', () => {
  it('is set on an openai target that has it', () => {
    const r = compiled({ name: 'oa', provider: 'openai', baseUrl: 'https://api.openai.com/v1', responsesApi: true });
    expect(r.problems).toEqual([]);
    expect(r.snapshot.models.m?.targets[0]?.responsesApi).toBe(true);
  });

  it('is absent when false or unset: the snapshot is the one an older compiler made', () => {
    const unset = compiled({ name: 'oa', provider: 'openai', baseUrl: 'https://api.openai.com/v1' });
    const off = compiled({ name: 'oa', provider: 'openai', baseUrl: 'https://api.openai.com/v1', responsesApi: false });
    expect('responsesApi' in (unset.snapshot.models.m?.targets[0] ?? {})).toBe(false);
    expect(off.snapshot.version).toBe(unset.snapshot.version);
  });

  it('is refused on another provider, naming the field', () => {
    const r = compiled({ name: 'an', provider: 'anthropic', baseUrl: 'https://api.anthropic.com', responsesApi: true });
    expect(r.problems).toEqual([
      { object: 'ModelRoute/m', field: 'spec.targets[0].responsesApi', message: 'applies to provider openai, and to azure-openai without apiVersion, only' },
    ]);
    expect(r.snapshot.models.m?.targets[0]?.responsesApi).toBeUndefined();
  });

  it('is set on an azure-openai target of the v1 API, refused on one of a dated API', () => {
    const v1 = compiled({ name: 'az', provider: 'azure-openai', baseUrl: 'https://r.openai.azure.com', responsesApi: true });
    expect(v1.problems).toEqual([]);
    expect(v1.snapshot.models.m?.targets[0]?.responsesApi).toBe(true);
    const dated = compiled({ name: 'az', provider: 'azure-openai', baseUrl: 'https://r.openai.azure.com', apiVersion: '2024-10-21', responsesApi: true });
    expect(dated.problems).toEqual([
      { object: 'ModelRoute/m', field: 'spec.targets[0].responsesApi', message: 'applies to provider openai, and to azure-openai without apiVersion, only' },
    ]);
    expect(dated.snapshot.models.m?.targets[0]?.responsesApi).toBeUndefined();
  });
});
