// The examples of docs/clouds.md, section "Google Vertex AI and the Gemini API", run as written: the ModelRoutes
// (Vertex Gemini, Claude on Vertex, the Gemini API with its key Secret) and the service-account Secret are served by a
// standalone gateway (only baseUrl added, pointing at the fakes; the example's placeholder key replaced by a real key
// pair the fake token endpoint knows), the SDK example calls Claude on Vertex through it, the chart values render
// the Workload Identity annotation on the ServiceAccounts the IAM example binds, and the IAM example's gcloud calls
// are the documented ones (run with a recording gcloud).
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_ACCOUNT_KEY } from '../../gateway/providers/google/auth.ts';
import { CHART, helmOk } from '../chart/helm.ts';
import { parseDocs } from '../chart/chart.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { makeServiceAccount, startFakeOAuth, type FakeOAuth } from '../fakes/google/oauth.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { docExample } from '../helpers/docs.ts';
import { basics } from '../helpers/manifests.ts';
import { ROOT, type GatewayProcess } from '../helpers/process.ts';
import { startGoogleGateway } from './google-harness.ts';

type Doc = { kind: string; metadata: { name: string }; spec?: { targets: Array<Record<string, unknown>> }; stringData?: Record<string, string> };

let metadata: FakeMetadata;
let oauth: FakeOAuth;
let google: FakeGoogle;
let gw: GatewayProcess;
const b = basics();
const sa = makeServiceAccount('my-project');

function docsOf(example: string): Doc[] {
  return parseAllDocuments(example).map((d) => d.toJS() as Doc);
}

beforeAll(async () => {
  [metadata, oauth] = await Promise.all([startFakeMetadata(), startFakeOAuth([sa])]);
  const apiKey = docsOf(docExample('docs/clouds.md', 'google-routes')).find((d) => d.kind === 'Secret')?.stringData?.['api-key'] ?? '';
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t) || oauth.valid(t), apiKeys: new Set([apiKey]) });
  const docs = [...docsOf(docExample('docs/clouds.md', 'google-routes')), ...docsOf(docExample('docs/clouds.md', 'vertex-service-account'))].map((d) => {
    if (d.kind === 'ModelRoute') for (const t of d.spec?.targets ?? []) t.baseUrl = google.url;
    if (d.kind === 'Secret' && d.stringData?.[SERVICE_ACCOUNT_KEY]) d.stringData[SERVICE_ACCOUNT_KEY] = sa.json;
    return d;
  });
  gw = await startGoogleGateway([...b.docs, ...docs], {
    GCE_METADATA_HOST: metadata.host,
    HTTPS_PROXY: oauth.proxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
    NODE_EXTRA_CA_CERTS: oauth.caFile,
  });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([google?.close(), metadata?.close(), oauth?.close()]);
});

describe('docs/clouds.md: Google Vertex AI and the Gemini API', () => {
  it('serves the ModelRoutes of the examples, listed in /v1/models', async () => {
    const models = (await (await fetch(`${gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining(['gemini-flash', 'claude-sonnet', 'gemini-studio', 'claude-haiku']));
  });

  it('answers the SDK example through Claude on Vertex (ambient credentials of the GKE metadata server)', async () => {
    const port = new URL(gw.url).port;
    const code = docExample('docs/clouds.md', 'google-sdk').replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
    // Not execFileSync: the fakes run in this process and must answer meanwhile.
    const { stdout: out } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, SVC_KEY: b.keys.builder },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(out.trim().split('\n')).toEqual(['Hello from the fake Anthropic upstream.', 'Hello from the fake Anthropic upstream.']);
    const calls = google.calls.filter((c) => c.path.endsWith('/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict'));
    expect(calls.map((c) => c.path.split('/publishers')[0])).toContain('/v1/projects/my-project/locations/us-east5');
  });

  it('serves Claude with the service-account Secret of the example', async () => {
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': b.keys.builder, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-haiku', max_tokens: 20, messages: [{ role: 'user', content: 'Hello there' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-upstream')).toBe('vertex-global');
    expect(oauth.valid(String(google.calls.at(-1)?.headers.authorization).replace('Bearer ', ''))).toBe(true);
    expect(google.calls.at(-1)?.path).toBe('/v1/projects/my-project/locations/global/publishers/anthropic/models/claude-haiku-4-5@20251001:rawPredict');
  });

  it('renders the chart values: the Workload Identity annotation on the service accounts the IAM example binds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-gke-'));
    writeFileSync(join(dir, 'values.yaml'), docExample('docs/clouds.md', 'gke-values'));
    const rendered = parseDocs(await helmOk(['template', 'svc-gateway', CHART, '-n', 'ai', '-f', join(dir, 'values.yaml')]));
    const accounts = rendered.filter((d) => d.kind === 'ServiceAccount' && (d.metadata.annotations ?? {})['iam.gke.io/gcp-service-account']);
    expect(accounts.map((d) => d.metadata.name).sort()).toEqual(['svc-gateway-gateway', 'svc-gateway-operator']);

    // The IAM example, run with a gcloud that records its arguments.
    writeFileSync(join(dir, 'gcloud'), `#!/bin/sh\necho "$*" >> "${join(dir, 'calls')}"\n`);
    chmodSync(join(dir, 'gcloud'), 0o755);
    execFileSync('bash', ['-euo', 'pipefail', '-c', docExample('docs/clouds.md', 'gke-iam')], {
      env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
    });
    const calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n');
    const gsa = 'svc-gateway@my-project.iam.gserviceaccount.com';
    expect(accounts.every((d) => (d.metadata.annotations ?? {})['iam.gke.io/gcp-service-account'] === gsa)).toBe(true);
    expect(calls).toContain(`projects add-iam-policy-binding my-project --member serviceAccount:${gsa} --role roles/aiplatform.user`);
    for (const ksa of accounts.map((d) => d.metadata.name))
      expect(calls).toContain(
        `iam service-accounts add-iam-policy-binding ${gsa} --role roles/iam.workloadIdentityUser --member serviceAccount:my-project.svc.id.goog[ai/${ksa}]`,
      );
  });
});
