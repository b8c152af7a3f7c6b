// An McpServer applied with kubectl on a real API server: the operator compiles it (its header value from a Secret,
// sealed in Redis), sets its Ready condition (MissingSecret until the Secret exists), and a gateway in cluster mode
// serves it to the official SDK client at /mcp/<name> with the upstream's credential injected.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { GatewayProcess } from '../helpers/process.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from '../operator/harness.ts';
import { getCustom, secretKey, waitFor, type ApiKeyObject } from '../operator/kube-api.ts';

const TOKEN = 'upstream-credential-operator-c41d';
let cluster: Cluster;
let inst: Installation;
let sdk: SdkUpstream;
let key: string;

const API = 'gateway.svc.dev/v1alpha1';
const doc = (kind: string, name: string, spec: object): string => JSON.stringify({ apiVersion: API, kind, metadata: { name }, spec });

beforeAll(async () => {
  [cluster, sdk] = await Promise.all([startCluster('mcp'), startSdkServer(TOKEN)]);
  inst = await install(cluster, 'mcp');
  await inst.startOperator('op-0');
  await inst.startGateway();
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    [
      doc('Plan', 'pro', { tier: 1 }),
      doc('Account', 'acme', { planRef: 'pro' }),
      doc('ApiKey', 'agent', { accountRef: 'acme' }),
      doc('McpServer', 'tools', { url: sdk.url, headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }] }),
    ].join('\n---\n'),
  );
  key = await waitFor('the generated key', () => secretKey(cluster.api, inst.ns, 'agent-key'));
  await gatewayReady(gw(), 20_000, () => inst.operators[0]?.output() ?? '');
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await Promise.allSettled([cluster?.stop(), sdk?.close()]);
});

const gw = (): GatewayProcess => {
  const g = inst.gateways[0];
  if (!g) throw new Error('no gateway');
  return g;
};

const ready = async (): Promise<{ status: string; reason: string; message: string } | undefined> =>
  (await getCustom<ApiKeyObject>(cluster.api, inst.ns, 'mcpservers', 'tools'))?.status?.conditions?.find((c) => c.type === 'Ready');

describe('an McpServer applied with kubectl', () => {
  it('is not served while its Secret is missing, and Ready=False names it', async () => {
    const r = await waitFor('MissingSecret', async () => ((await ready())?.reason === 'MissingSecret' ? ready() : undefined));
    expect(r).toMatchObject({ status: 'False', message: `Secret tools-token key authorization does not exist in namespace ${inst.ns}.` });
    // The key's Secret exists before a config publish carries its record: wait until the gateway knows the key (no
    // longer 401), then the server it names must still be unknown.
    const call = (): Promise<number> =>
      fetch(`${gw().url}/mcp/tools`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      }).then((r) => r.status);
    const status = await waitFor(
      'the key served',
      async () => {
        const s = await call();
        return s === 401 ? undefined : s;
      },
      20_000,
      50,
    );
    expect(status).toBe(404);
  });

  it('is served by the gateway once the Secret exists, with its credential injected upstream', async () => {
    await inst.kubectlOk(['create', 'secret', 'generic', 'tools-token', `--from-literal=authorization=Bearer ${TOKEN}`]);
    await waitFor('Ready', async () => (await ready())?.status === 'True', 20_000);
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'k8s-client', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gw().url}/mcp/tools`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
      );
      return client;
    };
    const client = await waitFor('served', () => connect().catch(() => undefined), 20_000, 100);
    const r = await client.callTool({ name: 'echo', arguments: { text: 'from the cluster' } });
    expect(r.content).toEqual([{ type: 'text', text: 'from the cluster' }]);
    await client.close();
    expect(new Set(sdk.authorizations)).toEqual(new Set([`Bearer ${TOKEN}`]));
  });
});
