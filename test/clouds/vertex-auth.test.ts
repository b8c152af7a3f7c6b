// How a Vertex target gets its token, with google-auth-library unmodified and only its endpoints pointed at fakes:
// ambient credentials from the GKE metadata server (GCE_METADATA_HOST), refreshed before they expire and fetched once
// per token lifetime, not per call; a metadata server that fails makes the target fail over with credential_error and
// the target recovers with it; a service-account key from a Secret (whole Secret: key service-account.json; or one
// key) signs a JWT that the fake token endpoint verifies with the key's public key, one grant for every call and
// every target sharing the key; a key the token endpoint refuses fails over with credential_error, the private key
// never in an answer or a log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_HOLD_MS } from '../../gateway/providers/credential-backoff.ts';
import { EARLY_REFRESH_MS } from '../../gateway/providers/google/auth.ts';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { makeServiceAccount, startFakeOAuth, type FakeOAuth, type ServiceAccount } from '../fakes/google/oauth.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { startGoogleGateway } from './google-harness.ts';

const MODEL = 'claude-haiku-4-5@20251001';
/** The library refreshes a token 60 s before it expires (EARLY_REFRESH_MS): a 68 s token is used for 8 s. */
const EXPIRES_IN = 68;
const USED_FOR_MS = EXPIRES_IN * 1000 - EARLY_REFRESH_MS;

let metadata: FakeMetadata;
let oauth: FakeOAuth;
let google: FakeGoogle;
let spare: FakeAnthropic;
let sa: ServiceAccount;
let stranger: ServiceAccount;
const keys = basics();

const vertex = (name: string, credentials: TargetSpec['credentials']): TargetSpec => ({
  name,
  provider: 'vertex',
  region: 'global',
  project: 'proj-1',
  baseUrl: google.url,
  upstreamModel: MODEL,
  credentials,
});
const spareTarget = (): TargetSpec => ({ name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 });

beforeAll(async () => {
  sa = makeServiceAccount('proj-1');
  // The same account's email with another key pair: Google would refuse its signature.
  stranger = makeServiceAccount('proj-1');
  [metadata, oauth, spare] = await Promise.all([startFakeMetadata(EXPIRES_IN), startFakeOAuth([sa]), startFakeAnthropic('spare')]);
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t) || oauth.valid(t), apiKeys: new Set() });
});

afterAll(async () => {
  await Promise.all([google?.close(), spare?.close(), metadata?.close(), oauth?.close()]);
});

const ask = (gw: GatewayProcess, model: string): Promise<Response> =>
  fetch(`${gw.url}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': keys.keys.builder, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'Hello there, how are you?' }] }),
  });

const lastToken = (): string => String(google.calls.at(-1)?.headers.authorization).replace(/^Bearer /, '');

describe('ambient credentials: the GKE metadata server', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGoogleGateway([...keys.docs, route('claude-gke', [vertex('vertex-global', { ambient: {} }), spareTarget()])], {
      GCE_METADATA_HOST: metadata.host,
      SVC_PROBE_INTERVAL_SECONDS: '86400',
    });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('uses one token until it is about to expire, then fetches the next (the global host of Vertex)', async () => {
    const first = await ask(gw, 'claude-gke');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-svc-upstream')).toBe('vertex-global');
    expect(google.calls.at(-1)?.path).toBe(`/v1/projects/proj-1/locations/global/publishers/anthropic/models/${MODEL}:rawPredict`);
    // Start from a fresh token: one the start-up probe fetched earlier is first let run out.
    const dueAt = (t: string): number => (metadata.issuedAt(t) ?? 0) + USED_FOR_MS + 500;
    if (Date.now() - (metadata.issuedAt(lastToken()) ?? 0) > 2000) {
      await new Promise((r) => setTimeout(r, Math.max(0, dueAt(lastToken()) - Date.now())));
      expect((await ask(gw, 'claude-gke')).status).toBe(200);
    }
    const fetches = metadata.tokenFetches;
    const token = lastToken();
    for (let i = 0; i < 3; i++) expect((await ask(gw, 'claude-gke')).status).toBe(200);
    expect(metadata.tokenFetches).toBe(fetches);
    expect(lastToken()).toBe(token);

    // Past the token's useful life: the library asks the metadata server again, once.
    await new Promise((r) => setTimeout(r, Math.max(0, dueAt(token) - Date.now())));
    await Promise.all(Array.from({ length: 3 }, () => ask(gw, 'claude-gke')));
    expect(metadata.tokenFetches).toBe(fetches + 1);
    expect(lastToken()).not.toBe(token);
    expect(lastToken()).toBe(metadata.issued.at(-1));
  });

  it('fails over with credential_error while the metadata server cannot give a token, and recovers with it', async () => {
    await new Promise((r) => setTimeout(r, USED_FOR_MS + 200)); // the cached token is due for refresh
    metadata.failing = true;
    const calls = google.calls.length;
    const res = await ask(gw, 'claude-gke');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-upstream')).toBe('spare');
    expect(res.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    expect(google.calls.length).toBe(calls);
    // Held for FIRST_HOLD_MS: the next call fails over at once, without asking the metadata server again.
    const fetches = metadata.tokenFetches;
    const again = await ask(gw, 'claude-gke');
    expect(again.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    expect(metadata.tokenFetches).toBe(fetches);
    metadata.failing = false;
    await new Promise((r) => setTimeout(r, FIRST_HOLD_MS + 100));
    const back = await ask(gw, 'claude-gke');
    expect(back.headers.get('x-svc-upstream')).toBe('vertex-global');
    for (const t of metadata.issued) expect(gw.output()).not.toContain(t);
  });
});

describe('a service-account key from a Secret', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGoogleGateway(
      [
        ...keys.docs,
        secret('vertex-sa', { 'service-account.json': sa.json }),
        secret('vertex-sa-one-key', { 'key.json': sa.json }),
        secret('stranger-sa', { 'service-account.json': stranger.json }),
        route('claude-sa', [vertex('vertex-sa', { secretKeyRef: { name: 'vertex-sa' } })]),
        route('claude-sa-key', [vertex('vertex-sa-key', { secretKeyRef: { name: 'vertex-sa-one-key', key: 'key.json' } })]),
        route('claude-stranger', [vertex('vertex-stranger', { secretKeyRef: { name: 'stranger-sa' } }), spareTarget()]),
      ],
      { HTTPS_PROXY: oauth.proxyUrl, NO_PROXY: '127.0.0.1,localhost', NODE_EXTRA_CA_CERTS: oauth.caFile, SVC_PROBE_INTERVAL_SECONDS: '86400' },
    );
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('signs a JWT with the key, gets a token for it, and shares it across calls and targets with the same key', async () => {
    for (const model of ['claude-sa', 'claude-sa-key', 'claude-sa']) {
      const res = await ask(gw, model);
      expect(res.status).toBe(200);
      expect(oauth.valid(lastToken())).toBe(true);
    }
    // The only refusals are of the other key (the start-up probe of its target may have tried it already).
    expect(oauth.refusals.filter((r) => r !== 'invalid_grant: Invalid JWT Signature.')).toEqual([]);
    expect(oauth.grants).toBe(1);
    expect(oauth.otherHosts).toEqual([]);
  });

  it('fails over with credential_error when the token endpoint refuses the signature of the key, and never shows the key', async () => {
    const res = await ask(gw, 'claude-stranger');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-upstream')).toBe('spare');
    expect(res.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    // Refused by the token endpoint (at this call, or at the probe just before: a failure is held for 2 s).
    expect(oauth.refusals.length).toBeGreaterThan(0);
    expect(new Set(oauth.refusals)).toEqual(new Set(['invalid_grant: Invalid JWT Signature.']));
    await until(() => gw.output().length > 0, 1000);
    const keyBody = (JSON.parse(stranger.json) as { private_key: string }).private_key.split('\n')[1] ?? '';
    expect(keyBody.length).toBeGreaterThan(20);
    expect(gw.output()).not.toContain(keyBody);
    expect(await res.text()).not.toContain(keyBody);
    for (const t of oauth.issued) expect(gw.output()).not.toContain(t);
  });
});
