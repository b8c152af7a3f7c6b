// spec.oauth on a real API server: the CRD's CEL rules refuse an McpServer with both oauth and an Authorization
// header, and an McpServer with oauth applied with kubectl is compiled by the operator (its client secret read from
// the Secret and sealed in Redis) and served by a gateway in cluster mode, which sends the upstream the token it
// obtained from the token endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { GatewayProcess } from '../helpers/process.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { startIssuer, type Issuer } from '../helpers/oauth-issuer.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from '../operator/harness.ts';
import { getCustom, secretKey, waitFor, type ApiKeyObject } from '../operator/kube-api.ts';

const SECRET = 'operator-client-secret-91c2';
let cluster: Cluster;
let inst: Installation;
let issuer: Issuer;
let sdk: SdkUpstream;
let key: string;

const API = 'gateway.svc.dev/v1alpha1';
const doc = (kind: string, name: string, spec: object): string => JSON.stringify({ apiVersion: API, kind, metadata: { name }, spec });
const oauth = (): object => ({ tokenUrl: issuer.tokenUrl, clientId: 'gateway', clientSecretRef: { name: 'crm-client', key: 'secret' }, scopes: ['crm:read'] });

beforeAll(async () => {
  [cluster, issuer] = await Promise.all([startCluster('mcp-oauth'), startIssuer({ gateway: { secret: SECRET, expiresIn: 3600 } })]);
  sdk = await startSdkServer((bearer) => issuer.valid(bearer));
  inst = await install(cluster, 'mcp-oauth');
  await inst.startOperator('op-0');
  await inst.startGateway();
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    [
      doc('Plan', 'pro', { tier: 1 }),
      doc('Account', 'acme', { planRef: 'pro' }),
      doc('ApiKey', 'agent', { accountRef: 'acme' }),
      doc('McpServer', 'crm', { url: sdk.url, oauth: oauth() }),
    ].join('\n---\n'),
  );
  // The Secret after the McpServer: the operator compiles the server again when its Secret appears.
  await inst.kubectlOk(['create', 'secret', 'generic', 'crm-client', `--from-literal=secret=${SECRET}`]);
  key = await waitFor('the generated key', () => secretKey(cluster.api, inst.ns, 'agent-key'));
  await gatewayReady(gw(), 20_000, () => inst.operators[0]?.output() ?? '');
}, 120_000);

afterAll(async () => {
  await inst?.stop();
  await Promise.allSettled([cluster?.stop(), sdk?.close(), issuer?.close()]);
});

const gw = (): GatewayProcess => {
  const g = inst.gateways[0];
  if (!g) throw new Error('no gateway');
  return g;
};

describe('an McpServer with spec.oauth applied with kubectl', () => {
  it('is refused by the API server with an Authorization header as well', async () => {
    const r = await inst.kubectl(
      ['apply', '-f', '-'],
      doc('McpServer', 'both', { url: sdk.url, oauth: oauth(), headers: [{ name: 'Authorization', value: 'Bearer static' }] }),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('takes one of oauth, an Authorization header');
  });

  it('is Ready and served, the upstream called with the token the gateway obtained', async () => {
    await waitFor(
      'Ready',
      async () =>
        (await getCustom<ApiKeyObject>(cluster.api, inst.ns, 'mcpservers', 'crm'))?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
      20_000,
    );
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'k8s-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw().url}/mcp/crm`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
      return client;
    };
    const client = await waitFor('served', () => connect().catch(() => undefined), 20_000, 100);
    const r = await client.callTool({ name: 'echo', arguments: { text: 'with a token' } });
    expect(r.content).toEqual([{ type: 'text', text: 'with a token' }]);
    await client.close();
    // One token per process that calls the upstream: the gateway, and the operator's availability prober.
    const fetches = issuer.requestsOf('gateway');
    expect(fetches.length).toBeGreaterThanOrEqual(1);
    expect(fetches.length).toBeLessThanOrEqual(2);
    expect(fetches.every((q) => q.status === 200)).toBe(true);
    expect(issuer.requestsOf('gateway')[0]?.form).toMatchObject({ grant_type: 'client_credentials', scope: 'crm:read' });
    const tokens = new Set(issuer.issued.map((t) => `Bearer ${t.token}`));
    expect(sdk.authorizations.length).toBeGreaterThan(0);
    expect(sdk.authorizations.every((a) => tokens.has(a))).toBe(true);
    for (const out of [gw().output(), inst.operators[0]?.output() ?? '']) {
      expect(out).not.toContain(SECRET);
      for (const t of issuer.issued) expect(out).not.toContain(t.token);
    }
  });
});
