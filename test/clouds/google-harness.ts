// A standalone gateway in a child process for the Google cloud tests: its environment holds only what a GKE pod's
// would (GCE_METADATA_HOST pointing at the fake metadata server), never the test runner's own Google settings, and
// HOME is an empty folder so no gcloud well-known credential file is read.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toYaml } from '../helpers/manifests.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';

export async function startGoogleGateway(docs: object[], env: Record<string, string | undefined> = {}): Promise<GatewayProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-google-'));
  const file = join(dir, 'manifests.yaml');
  writeFileSync(file, toYaml(docs));
  const gw = await startGatewayProcess({
    SVC_CONFIG: file,
    HOME: dir,
    CLOUDSDK_CONFIG: join(dir, 'gcloud'),
    GOOGLE_APPLICATION_CREDENTIALS: undefined,
    GOOGLE_CLOUD_PROJECT: undefined,
    GCLOUD_PROJECT: undefined,
    GCE_METADATA_HOST: undefined,
    GCE_METADATA_IP: undefined,
    METADATA_SERVER_DETECTION: undefined,
    HTTPS_PROXY: undefined,
    https_proxy: undefined,
    HTTP_PROXY: undefined,
    http_proxy: undefined,
    ...env,
  });
  await until(
    () =>
      fetch(`${gw.metricsUrl}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      ),
    15_000,
    'gateway ready',
    50,
  );
  return gw;
}

/** The key's month spend (USD, from /v1/me). */
export async function monthSpend(gw: GatewayProcess, key: string): Promise<number> {
  const me = (await (await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as { month_spend_usd: number };
  return me.month_spend_usd;
}

/** Waits for the key's month spend to move from `before`, and returns by how much, in nano-USD. */
export async function spentSince(gw: GatewayProcess, key: string, before: number): Promise<number> {
  let now = before;
  await until(
    async () => {
      now = await monthSpend(gw, key);
      return now !== before;
    },
    5000,
    'spend recorded',
    20,
  );
  return Math.round((now - before) * 1e9);
}
