import { describe, expect, it } from 'vitest';
import { parseManifests } from '../config/manifests.ts';
import { compile } from './compile.ts';
import { Keyring, sealSnapshot, unsealSnapshot } from './sealed-credentials.ts';

const API = 'gateway.svc.dev/v1alpha1';
const plan = { apiVersion: API, kind: 'Plan', metadata: { name: 'pro' }, spec: { tier: 1, mcp: { servers: ['gh*'] } } };
const acct = { apiVersion: API, kind: 'Account', metadata: { name: 'acme' }, spec: { planRef: 'pro' } };
const key = { apiVersion: API, kind: 'ApiKey', metadata: { name: 'k' }, spec: { accountRef: 'acme', mcp: { tools: ['github/get_*'] } } };
const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'gh' }, stringData: { token: 'Bearer upstream-secret' } };
const server = (name: string, spec: object): object => ({ apiVersion: API, kind: 'McpServer', metadata: { name }, spec });
const github = server('github', {
  url: 'https://mcp.example.test/mcp',
  headers: [{ name: 'Authorization', secretKeyRef: { name: 'gh', key: 'token' } }],
  tools: { exclude: ['delete_*'] },
  pricing: { perCallUsd: 0.001, tools: [{ name: 'search', perCallUsd: 0.25 }] },
});

function compiled(docs: object[]): ReturnType<typeof compile> {
  const { set, errors } = parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc })));
  expect(errors).toEqual([]);
  return compile(set, { pepper: 'p', keyFor: () => 'sk-svc-00000000000000000000000000000000000000' });
}

describe('compile: McpServer', () => {
  it('compiles url, headers from the Secret, tool globs, prices in nano-USD and the default prefix', () => {
    const r = compiled([plan, acct, secret, github]);
    expect(r.problems).toEqual([]);
    expect(r.snapshot.mcpServers?.github).toEqual({
      name: 'github',
      url: 'https://mcp.example.test/mcp',
      prefix: 'github',
      headers: [{ name: 'Authorization', credential: { kind: 'value', value: 'Bearer upstream-secret' } }],
      include: ['*'],
      exclude: ['delete_*'],
      perCallNano: 1_000_000,
      toolNano: { search: 250_000_000 },
      timeouts: { connectMs: 5_000, firstByteMs: 60_000, totalMs: 600_000 },
    });
    expect(r.verdicts.mcpServers.github).toMatchObject({ ready: true, served: true, reason: 'Accepted' });
    expect(r.snapshot.plans.pro?.mcp).toEqual({ servers: ['gh*'], tools: null });
  });

  it('carries the ApiKey spec.mcp into its record', () => {
    const r = compiled([plan, acct, key]);
    expect(r.keys[0]?.mcp).toEqual({ servers: null, tools: ['github/get_*'] });
  });

  it('leaves out a server whose Secret is missing, with a verdict that names it', () => {
    const r = compiled([plan, acct, github]);
    expect(r.snapshot.mcpServers).toBeUndefined();
    expect(r.verdicts.mcpServers.github).toEqual({
      ready: false,
      served: false,
      reason: 'MissingSecret',
      message: 'Secret gh key token does not exist.',
    });
  });

  it('refuses a second server with the same prefix', () => {
    const r = compiled([secret, github, server('hub', { url: 'https://other.test/mcp', prefix: 'github' })]);
    expect(Object.keys(r.snapshot.mcpServers ?? {})).toEqual(['github']);
    expect(r.verdicts.mcpServers.hub).toMatchObject({ served: false, reason: 'PrefixTaken' });
  });

  it('keeps the version of a config without McpServers as it was (no mcpServers key)', () => {
    const r = compiled([plan, acct]);
    expect('mcpServers' in r.snapshot).toBe(false);
  });

  it('seals header values at rest, bound to their server and header', () => {
    const ring = new Keyring([Buffer.alloc(32, 7)]);
    const snap = compiled([secret, github]).snapshot;
    const sealed = sealSnapshot(snap, ring);
    expect(JSON.stringify(sealed)).not.toContain('upstream-secret');
    expect(unsealSnapshot(sealed, ring)).toEqual(snap);
    const moved = structuredClone(sealed);
    const s = moved.mcpServers?.github;
    if (!s?.headers[0]) throw new Error('no header');
    s.headers[0].name = 'X-Other';
    expect(() => unsealSnapshot(moved, ring)).toThrow('does not verify');
  });
});
