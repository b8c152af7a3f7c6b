// AKS Workload Identity end to end, in gateway processes of their own (the identity is the process's environment):
// credentials {ambient: {}} run @azure/identity's WorkloadIdentityCredential unmodified against the fake Entra ID
// (AZURE_AUTHORITY_HOST, its self-signed certificate trusted through NODE_EXTRA_CA_CERTS), with a federated token
// file as the kubelet writes it. Tokens live 10 seconds: calls share one token, and past its expiry exactly one
// refresh serves a burst of calls. A federated token Entra refuses fails the target over as credential_error. No
// key, token or secret ever appears in an answer or in the process's output.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEntra, type FakeEntra } from '../fakes/azure/entra.ts';
import { AZURE_REPLY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, route, type TargetSpec } from '../helpers/manifests.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';

const KEY = 'azure-identity-test-api-key-77aa88bb99cc';
// What the kubelet projects into the pod (a JWT in real life; opaque to the gateway).
const FEDERATED = 'eyJhbGciOiJSUzI1NiJ9.fake-federated-service-account-token.c2lnbmF0dXJl';
const REFUSED_FEDERATED = 'eyJhbGciOiJSUzI1NiJ9.fake-stale-service-account-token.c2lnbmF0dXJl';
const LIFETIME_S = 10;
const fast = { connectMs: 500, firstByteMs: 3000, idleMs: 3000, totalMs: 10_000 };

let entra: FakeEntra;
let azure: FakeAzureOpenAI;
let backup: FakeUpstream;
let gw: GatewayProcess;
let refused: GatewayProcess;
let key: string;

function tokenFile(content: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-azure-wi-')), 'azure-identity-token');
  writeFileSync(file, content);
  return file;
}

const identityEnv = (file: string): Record<string, string> => ({
  // What the AKS Workload Identity webhook injects into the pod (the authority host pointed at the fake).
  AZURE_AUTHORITY_HOST: entra.url,
  AZURE_TENANT_ID: 'tenant-wi',
  AZURE_CLIENT_ID: 'wi-client',
  AZURE_FEDERATED_TOKEN_FILE: file,
  NODE_EXTRA_CA_CERTS: entra.certFile,
  AZURE_OPENAI_TEST_KEY: KEY,
  SVC_PROBE_INTERVAL_SECONDS: '3600',
  LOG_LEVEL: 'debug',
});

beforeAll(async () => {
  entra = await startFakeEntra(LIFETIME_S);
  entra.register({ tenant: 'tenant-wi', clientId: 'wi-client', assertion: FEDERATED });
  [azure, backup] = await Promise.all([
    startFakeAzureOpenAI({ apiKey: KEY, entra, deployments: { 'gpt-4o-prod': 'chat', 'embed-small': 'embeddings' } }),
    startFakeUpstream('backup'),
  ]);
  const b = basics();
  key = b.keys.builder;
  const az = (name: string, extra: Partial<TargetSpec>): TargetSpec => ({
    name,
    provider: 'azure-openai',
    baseUrl: azure.url,
    upstreamModel: 'gpt-4o-prod',
    credentials: { ambient: {} },
    timeouts: fast,
    ...extra,
  });
  const config = writeManifests([
    ...b.docs,
    route('gpt-wi', [az('az-wi-dated', { apiVersion: '2024-10-21' })]),
    route('gpt-wi-v1', [az('az-wi-v1', {})]),
    route('embed-wi', [az('az-wi-embed', { upstreamModel: 'embed-small' })], { type: 'embeddings' }),
    route('gpt-key-env', [az('az-env-key', { credentials: { env: 'AZURE_OPENAI_TEST_KEY' } })]),
    route('gpt-wi-fallback', [
      az('az-wi-first', { weight: 1 }),
      { name: 'backup', provider: 'openai', baseUrl: backup.baseUrl, upstreamModel: 'gpt-backup', weight: 0, timeouts: fast },
    ]),
  ]);
  [gw, refused] = await Promise.all([
    startGatewayProcess({ SVC_CONFIG: config, ...identityEnv(tokenFile(FEDERATED)) }),
    startGatewayProcess({ SVC_CONFIG: config, ...identityEnv(tokenFile(REFUSED_FEDERATED)) }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([gw?.stop(), refused?.stop()]);
  await Promise.allSettled([azure?.close(), backup?.close(), entra?.close()]);
});

const client = (p: GatewayProcess): OpenAI => new OpenAI({ baseURL: `${p.url}/v1`, apiKey: key, maxRetries: 0 });
const ask = (model: string): OpenAI.ChatCompletionCreateParamsNonStreaming => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const wiTokenRequests = (): number => entra.tokenRequests.filter((r) => r.clientId === 'wi-client' && r.proof === 'assertion').length;

describe('AKS Workload Identity (credentials: ambient)', () => {
  it('serves both URL shapes and embeddings with one Entra ID token, and refreshes it once past its expiry', async () => {
    const c = client(gw);
    const done = await c.chat.completions.create(ask('gpt-wi'));
    expect(done.choices[0]?.message.content).toBe(AZURE_REPLY);
    const before = wiTokenRequests();
    expect(before).toBeGreaterThanOrEqual(1);
    for (const model of ['gpt-wi', 'gpt-wi-v1']) {
      let text = '';
      for await (const ch of await c.chat.completions.create({ ...ask(model), stream: true })) text += ch.choices[0]?.delta?.content ?? '';
      expect(text).toBe(AZURE_REPLY);
    }
    expect((await c.embeddings.create({ model: 'embed-wi', input: 'x' })).data).toHaveLength(1);
    // Four calls, one token (the first call may have shared its fetch with the start-up probe).
    expect(wiTokenRequests()).toBe(before);
    const sent = azure.calls.filter((x) => String(x.headers.authorization ?? '').startsWith('Bearer '));
    expect(new Set(sent.map((x) => x.headers.authorization)).size).toBe(1);
    expect(azure.calls.slice(-4).map((x) => x.path)).toEqual([
      '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
      '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
      '/openai/v1/chat/completions',
      '/openai/v1/embeddings',
    ]);

    // Past the token's expiry: a burst of calls is served by exactly one new token (the fake Azure refuses an
    // expired one, so every call answering proves the token was fresh).
    const expiry = Math.max(...entra.issued.values());
    await new Promise((r) => setTimeout(r, expiry - Date.now() + 300));
    const burst = await Promise.all(Array.from({ length: 6 }, () => c.chat.completions.create(ask('gpt-wi-v1'))));
    expect(burst.map((r) => r.choices[0]?.message.content)).toEqual(Array(6).fill(AZURE_REPLY));
    expect(wiTokenRequests()).toBe(before + 1);
    expect(new Set(azure.calls.slice(-6).map((x) => x.headers.authorization)).size).toBe(1);
  }, 40_000);

  it('an api-key from the environment (credentials: env) goes in the api-key header', async () => {
    const done = await client(gw).chat.completions.create(ask('gpt-key-env'));
    expect(done.choices[0]?.message.content).toBe(AZURE_REPLY);
    expect(azure.calls.at(-1)?.headers['api-key']).toBe(KEY);
  });

  it('a federated token Entra refuses: the target fails over as credential_error, a target without another fails with 502 saying why', async () => {
    const { data, response } = await client(refused).chat.completions.create(ask('gpt-wi-fallback')).withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    expect(response.headers.get('x-svc-upstream')).toBe('backup');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    const only = await client(refused)
      .chat.completions.create(ask('gpt-wi'))
      .catch((e: unknown) => e);
    expect(only).toBeInstanceOf(OpenAI.APIError);
    expect((only as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((only as Error).message).toContain('no Entra ID token');
    expect(entra.tokenRequests.some((r) => r.clientId === 'wi-client' && r.proof === 'bad')).toBe(true);
  });

  it('the status page lists the Azure targets as their probes found them', async () => {
    type Components = { components: Array<{ name: string; status: string; updated_at?: string }> };
    const components = async (p: GatewayProcess): Promise<Components['components']> =>
      ((await (await fetch(`${p.url}/status/api/v2/components.json`)).json()) as Components).components;
    await until(async () => (await components(gw)).every((x) => x.updated_at !== undefined), 10_000, 'probed');
    const ok = await components(gw);
    expect(ok.find((x) => x.name.includes('gpt-wi'))?.status).toBe('operational');
    expect(ok.find((x) => x.name.includes('embed-wi'))?.status).toBe('operational');
  });

  it('no key, token, federated token or secret in any answer or in either process output', () => {
    const out = gw.output() + refused.output();
    expect(out.length).toBeGreaterThan(0);
    const secrets = [KEY, FEDERATED, REFUSED_FEDERATED, ...entra.issued.keys()];
    expect(secrets.length).toBeGreaterThan(3);
    for (const s of secrets) expect(out).not.toContain(s);
  });
});
