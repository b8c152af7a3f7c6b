// The Azure OpenAI section of docs/clouds.md, run as written: its ModelRoutes and Secrets served by a gateway
// pointed at the fake Azure OpenAI and the fake Entra ID (only the endpoints and the secret values swapped), its SDK
// call run by node against that gateway, its chart values rendered by helm onto both ServiceAccounts and pods.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import tls from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { find, parseDocs, podSpec } from '../chart/chart.ts';
import { template } from '../chart/helm.ts';
import { startFakeEntra, type FakeEntra } from '../fakes/azure/entra.ts';
import { AZURE_REPLY, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';
import { docExample } from '../helpers/docs.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics } from '../helpers/manifests.ts';
import { ROOT } from '../helpers/process.ts';

const KEY = 'azure-docs-test-api-key-31415926';
let entra: FakeEntra;
let azure: FakeAzureOpenAI;
let gw: TestGateway;
let key: string;

type Doc = { kind: string; metadata: { name: string }; stringData?: Record<string, string>; spec?: { targets?: Array<Record<string, unknown>> } };

beforeAll(async () => {
  entra = await startFakeEntra();
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), entra.cert]);
  azure = await startFakeAzureOpenAI({ apiKey: KEY, entra, deployments: { 'gpt-4o-prod': 'chat', 'embed-small': 'embeddings' } });
  const docs = [...parseAllDocuments(docExample('docs/clouds.md', 'azure-routes')), ...parseAllDocuments(docExample('docs/clouds.md', 'azure-sp-secret'))].map(
    (d) => d.toJS() as Doc,
  );
  const sp = parse(docExample('docs/clouds.md', 'azure-sp-secret')) as Doc;
  const creds = sp.stringData ?? {};
  entra.register({ tenant: creds.AZURE_TENANT_ID ?? '', clientId: creds.AZURE_CLIENT_ID ?? '', secret: creds.AZURE_CLIENT_SECRET ?? '' });
  for (const d of docs) {
    // Only the endpoints and the key differ from the page: the resources point at the fakes.
    if (d.kind === 'Secret' && d.metadata.name === 'azure-openai-key') d.stringData = { 'api-key': KEY };
    if (d.kind === 'Secret' && d.metadata.name === 'azure-sp') d.stringData = { ...d.stringData, AZURE_AUTHORITY_HOST: entra.url };
    for (const t of d.spec?.targets ?? []) t.baseUrl = azure.url;
  }
  const b = basics();
  key = b.keys.builder;
  gw = await startGateway([...b.docs, ...docs]);
});

afterAll(async () => {
  await gw?.close();
  await Promise.allSettled([azure?.close(), entra?.close()]);
});

describe('docs/clouds.md: Azure OpenAI', () => {
  it('the ModelRoutes and Secrets compile with both URL shapes and the credentials the page names', () => {
    const targets = gw.snapshot.models['gpt-4o']?.targets ?? [];
    expect(targets.map((t) => [t.name, t.apiVersion ?? 'v1', t.credential.kind, t.responsesApi ?? false])).toEqual([
      ['azure-swedencentral', 'v1', 'value', true],
      ['azure-eastus2', '2024-10-21', 'ambient', false],
    ]);
    expect(gw.snapshot.models['text-embedding-3-small']?.targets[0]?.credential.kind).toBe('bundle');
  });

  it('the SDK call of the page runs against them (chat with the api-key, embeddings with the service principal)', async () => {
    const dir = mkdtempSync(join(ROOT, 'test', 'clouds', '.tmp-azure-doc-'));
    try {
      const file = join(dir, 'call.mts');
      writeFileSync(file, docExample('docs/clouds.md', 'azure-sdk-call').replace('http://127.0.0.1:8080/v1', `${gw.url}/v1`));
      const out = await new Promise<string>((resolve, reject) =>
        execFile(process.execPath, [file], { env: { ...process.env, SVC_KEY: key }, timeout: 30_000 }, (err, stdout, stderr) =>
          err ? reject(new Error(`${String(err)}\n${stderr}`)) : resolve(stdout),
        ),
      );
      expect(out.trim().split('\n')).toEqual([AZURE_REPLY, '4']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(azure.calls.map((c) => [c.path, c.headers['api-key'] === KEY, String(c.headers.authorization ?? '').startsWith('Bearer fake-entra-')])).toEqual([
      ['/openai/v1/chat/completions', true, false],
      ['/openai/v1/embeddings', false, true],
    ]);
  });

  it('the chart values put the client id on both ServiceAccounts and the webhook label on both pods', async () => {
    const dir = mkdtempSync(join(ROOT, 'test', 'clouds', '.tmp-azure-values-'));
    try {
      const file = join(dir, 'values.yaml');
      writeFileSync(file, docExample('docs/clouds.md', 'azure-chart-values'));
      const docs = parseDocs(await template('ns1', [file]));
      for (const part of ['gateway', 'operator']) {
        expect(find(docs, 'ServiceAccount', `-${part}`).metadata.annotations).toMatchObject({
          'azure.workload.identity/client-id': '22222222-2222-2222-2222-222222222222',
        });
        const labels = (find(docs, 'Deployment', `-${part}`).spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
        expect(labels['azure.workload.identity/use']).toBe('true');
        expect(podSpec(find(docs, 'Deployment', `-${part}`)).serviceAccountName).toBe(find(docs, 'ServiceAccount', `-${part}`).metadata.name);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
