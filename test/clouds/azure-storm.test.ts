// The disconnect storm (test/abuse/disconnect-storm.test.ts) over Azure OpenAI targets: 150 streamed calls, both
// dialects, whose clients go away at random within 300 ms (while the first Entra ID token is still being fetched,
// during admission, during the stream). Shortly after, the fake Azure sees no request and no connection left open;
// no hold is left, no stream is billed as delivered, and every call's event is a 499.
import { connect } from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientsDrained, prng, sleep, startAbuseGateway, within, type AbuseGateway } from '../abuse/harness.ts';
import { abuseConfig, ACCOUNT } from '../abuse/manifests.ts';
import { requestBytes } from '../abuse/raw-http.ts';
import { startFakeEntra, type FakeEntra } from '../fakes/azure/entra.ts';
import { startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';
import { route, secret } from '../helpers/manifests.ts';

const CALLS = 150;
const WORDS = 'word '.repeat(80).trim();
const KEY = 'azure-storm-test-api-key-1123581321';

let entra: FakeEntra;
let azure: FakeAzureOpenAI;
let gw: AbuseGateway;
let key: string;

beforeAll(async () => {
  entra = await startFakeEntra();
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), entra.cert]);
  entra.register({ tenant: 'tenant-storm', clientId: 'storm-client', secret: 'storm-client-secret' });
  azure = await startFakeAzureOpenAI({ apiKey: KEY, entra, deployments: { 'gpt-4o-prod': 'chat' } });
  azure.fallback = () => ({ kind: 'reply', content: WORDS, chunkDelayMs: 100 });
  const cfg = abuseConfig({ openai: 'http://127.0.0.1:9/v1', anthropic: 'http://127.0.0.1:9' });
  key = cfg.key;
  const base = { provider: 'azure-openai' as const, baseUrl: azure.url, upstreamModel: 'gpt-4o-prod' };
  gw = await startAbuseGateway([
    ...cfg.docs,
    secret('az-key', { 'api-key': KEY }),
    secret('az-sp', {
      AZURE_TENANT_ID: 'tenant-storm',
      AZURE_CLIENT_ID: 'storm-client',
      AZURE_CLIENT_SECRET: 'storm-client-secret',
      AZURE_AUTHORITY_HOST: entra.url,
    }),
    route('az-sp', [{ name: 'sp', ...base, credentials: { secretKeyRef: { name: 'az-sp' } } }]),
    route('az-key', [{ name: 'key', ...base, apiVersion: '2024-10-21', credentials: { secretKeyRef: { name: 'az-key', key: 'api-key' } } }]),
  ]);
});

afterAll(async () => {
  await gw?.close();
  await Promise.allSettled([azure?.close(), entra?.close()]);
});

function callBytes(i: number): Buffer {
  const anthropicSide = i % 3 === 2;
  const model = i % 2 === 0 ? 'az-sp' : 'az-key';
  const messages = [{ role: 'user', content: `storm ${i}` }];
  const body = JSON.stringify(
    anthropicSide
      ? { model, max_tokens: 200, stream: true, messages }
      : { model, max_tokens: 200, stream: true, stream_options: { include_usage: true }, messages },
  );
  return requestBytes(
    'POST',
    anthropicSide ? '/anthropic/v1/messages' : '/v1/chat/completions',
    [
      ['authorization', `Bearer ${key}`],
      ['content-type', 'application/json'],
      ['content-length', String(Buffer.byteLength(body))],
    ],
    body,
  );
}

function abortedCall(port: number, bytes: Buffer, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.on('error', () => {});
    s.on('data', () => {});
    s.once('connect', () => s.write(bytes));
    setTimeout(() => {
      s.destroy();
      resolve();
    }, afterMs);
  });
}

describe('disconnect storm over Azure OpenAI', () => {
  it('leaves no upstream request or connection open, no hold, bills no stream in full', async () => {
    const r = prng(24);
    await Promise.all(Array.from({ length: CALLS }, (_, i) => abortedCall(gw.port, callBytes(i), r.int(301))));
    // Counted once the gateway has read every call (a loaded machine leaves it a backlog after the clients are gone).
    await clientsDrained(gw, CALLS);
    await within(3000, () => azure.open + azure.sockets === 0);
    await within(3000, async () => (await gw.ledger(ACCOUNT)).openHolds === 0);
    await sleep(500);
    const ledger = await gw.ledger(ACCOUNT);
    const events = await gw.events(ACCOUNT);
    console.log(
      `azure storm: ${CALLS} calls; Azure requests ${azure.calls.length}, token requests ${entra.tokenRequests.length}; open ${azure.open}/${azure.sockets}; holds ${ledger.openHolds}; events ${events.length}`,
    );
    expect({ open: azure.open, sockets: azure.sockets, openHolds: ledger.openHolds, heldNano: ledger.heldNano, fullStreams: azure.served.completion }).toEqual({
      open: 0,
      sockets: 0,
      openHolds: 0,
      heldNano: 0,
      fullStreams: 0,
    });
    expect(entra.tokenRequests.length).toBe(1);
    expect(events.filter((e) => e.status !== 499).map((e) => `${e.status} ${e.errorCode ?? ''}`)).toEqual([]);
  }, 60_000);
});
