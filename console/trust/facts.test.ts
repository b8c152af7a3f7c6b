import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../../gateway/contract/snapshot.ts';
import { contacts, isPrivateHost, MASKED_HOST, renderSecurityTxt, securityTxt, trustFacts } from './facts.ts';

const target = (name: string, provider: 'openai' | 'anthropic' | 'mock', baseUrl: string | null) => ({
  name,
  provider,
  baseUrl,
  upstreamModel: 'm',
  credential: { kind: 'none' as const },
  weight: 1,
  timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, totalMs: 1 },
  mock: null,
});
const model = (id: string, targets: ReturnType<typeof target>[]) => ({
  id,
  type: 'chat' as const,
  minTier: 0,
  inputNanoPerToken: 1,
  outputNanoPerToken: 1,
  maxOutputTokens: 1,
  targets,
  fallbacks: [],
});
const snap: Snapshot = {
  schema: 1,
  version: 'v',
  plans: {},
  accounts: {},
  models: {
    a: model('a', [target('oai', 'openai', 'https://api.openai.com/v1'), target('local', 'openai', 'http://vllm.internal:8000/v1')]),
    b: model('b', [target('ant', 'anthropic', 'https://api.anthropic.com'), target('oai2', 'openai', 'https://api.openai.com/v1')]),
    c: model('c', [target('mock', 'mock', null)]),
  },
};

describe('trust facts from the config', () => {
  it('subprocessors: one per provider and host, with their models and transport', () => {
    expect(trustFacts(snap, {}).subprocessors).toEqual([
      { provider: 'anthropic', host: 'api.anthropic.com', transport: 'https', models: ['b'] },
      { provider: 'openai', host: 'api.openai.com', transport: 'https', models: ['a', 'b'] },
      { provider: 'mock', host: 'built-in mock (no third party)', transport: 'in process', models: ['c'] },
      { provider: 'openai', host: 'vllm.internal:8000', transport: 'http', models: ['a'] },
    ]);
  });

  it.each<[Record<string, string>, string, string]>([
    [{}, 'not used', 'not used'],
    [{ REDIS_URL: 'rediss://r:6380', DATABASE_URL: 'postgres://p/db?sslmode=verify-full' }, 'TLS', 'TLS'],
    [
      { REDIS_URL: 'redis://r:6379', DATABASE_URL: 'postgres://p/db' },
      'not encrypted (plain TCP): put it on a private network, or use TLS',
      'not encrypted (plain TCP): put it on a private network, or use TLS',
    ],
    [{ DATABASE_URL: 'postgres://p/db', PGSSLMODE: 'require' }, 'not used', 'TLS'],
  ])('in transit with %j', (env, redis, pg) => {
    const t = trustFacts(snap, env).inTransit;
    expect(t.find((x) => x.link === 'Redis')?.state).toBe(redis);
    expect(t.find((x) => x.link === 'Postgres')?.state).toBe(pg);
    expect(t.find((x) => x.link === 'Gateway to upstream providers')?.state).toBe('HTTPS, except plain HTTP to vllm.internal:8000');
  });

  it('certifications default to none claimed; the installer may say more', () => {
    expect(trustFacts(snap, {}).certifications).toBe('self-hosted: none claimed');
    expect(trustFacts(snap, { SVC_TRUST_CERTIFICATIONS: 'ISO 27001 (2025, certificate 123)' }).certifications).toBe('ISO 27001 (2025, certificate 123)');
  });
});

describe('security.txt (RFC 9116)', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['security@example.com', ['mailto:security@example.com']],
    ['https://example.com/report, sec@example.com', ['https://example.com/report', 'mailto:sec@example.com']],
    ['mailto:a@b.c', ['mailto:a@b.c']],
  ])('contacts of %j', (raw, out) => {
    expect(contacts({ SVC_SECURITY_CONTACT: raw })).toEqual(out);
  });

  it('Contact and Expires are required: none without a contact; Expires from config, else 180 days ahead', () => {
    const now = Date.UTC(2026, 0, 1);
    expect(securityTxt({}, now)).toBeNull();
    expect(
      renderSecurityTxt(
        securityTxt(
          {
            SVC_SECURITY_CONTACT: 'sec@example.com',
            SVC_SECURITY_TXT_EXPIRES: '2026-12-31T00:00:00Z',
            SVC_PUBLIC_URL: 'https://gw.example.com/',
            SVC_SECURITY_POLICY_URL: 'https://example.com/policy',
          },
          now,
        )!,
      ),
    ).toBe(
      [
        '# Security contact of this svc-gateway installation (RFC 9116).',
        'Contact: mailto:sec@example.com',
        'Expires: 2026-12-31T00:00:00.000Z',
        'Policy: https://example.com/policy',
        'Canonical: https://gw.example.com/.well-known/security.txt',
        'Preferred-Languages: en',
        '',
      ].join('\n'),
    );
    expect(securityTxt({ SVC_SECURITY_CONTACT: 'a@b.c' }, now)?.expires).toBe('2026-06-30T00:00:00.000Z');
    expect(() => securityTxt({ SVC_SECURITY_CONTACT: 'a@b.c', SVC_SECURITY_TXT_EXPIRES: 'soon' }, now)).toThrow(/SVC_SECURITY_TXT_EXPIRES/);
  });
});

describe('masking private upstream hosts (SVC_TRUST_MASK_PRIVATE_HOSTS)', () => {
  const priv = model('p', [
    target('ip', 'openai', 'http://10.20.30.40:8000/v1'),
    target('svc', 'openai', 'http://vllm:8000/v1'),
    target('v6', 'openai', 'http://[fd00::7]:8000/v1'),
    target('pub', 'openai', 'https://api.openai.com/v1'),
  ]);
  const s2: Snapshot = { ...snap, models: { ...snap.models, p: priv } };

  it('shows every host by default, as documented', () => {
    const hosts = trustFacts(s2, {}).subprocessors.map((s) => s.host);
    expect(hosts).toEqual(expect.arrayContaining(['10.20.30.40:8000', 'vllm:8000', '[fd00::7]:8000', 'vllm.internal:8000', 'api.openai.com']));
  });

  it('masks private hosts everywhere /trust names them when the operator asks, and keeps public ones', () => {
    const f = trustFacts(s2, { SVC_TRUST_MASK_PRIVATE_HOSTS: '1' });
    const text = JSON.stringify(f);
    for (const h of ['10.20.30.40', 'vllm:8000', 'fd00::7', 'vllm.internal']) expect(text).not.toContain(h);
    expect(f.subprocessors).toEqual([
      { provider: 'anthropic', host: 'api.anthropic.com', transport: 'https', models: ['b'] },
      { provider: 'openai', host: 'api.openai.com', transport: 'https', models: ['a', 'b', 'p'] },
      { provider: 'mock', host: 'built-in mock (no third party)', transport: 'in process', models: ['c'] },
      { provider: 'openai', host: MASKED_HOST, transport: 'http', models: ['a', 'p'] },
    ]);
    expect(f.inTransit.find((x) => x.link === 'Gateway to upstream providers')?.state).toBe(`HTTPS, except plain HTTP to ${MASKED_HOST}`);
    expect(trustFacts(s2, { SVC_TRUST_MASK_PRIVATE_HOSTS: '0' }).subprocessors.map((s) => s.host)).toContain('10.20.30.40:8000');
  });

  it.each([
    ['10.20.30.40:8000', true],
    ['172.16.0.1', true],
    ['172.32.0.1', false],
    ['192.168.1.1:80', true],
    ['127.0.0.1:8000', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['8.8.8.8', false],
    ['[::1]:8000', true],
    ['[fd12::1]', true],
    ['[fe80::1]', true],
    ['[2001:db8::1]:443', false],
    ['vllm:8000', true],
    ['llm.ns.svc.cluster.local:8000', true],
    ['gpu.internal', true],
    ['api.openai.com', false],
  ])('%s is private: %s', (host, expected) => {
    expect(isPrivateHost(host)).toBe(expected);
  });
});
