// McpServers on the status page: each probed (initialize, ping, its session closed) as `mcp:<name>` beside the
// models, one that answers and one that refuses the gateway's credential; states, an incident, the Statuspage JSON
// and the page; probes call no tool and bill no account; the scheduler probes McpServers as it probes models.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledMcpServer } from '../../gateway/contract/snapshot.ts';
import { spComponents, spIncidents } from '../../console/status/statuspage-schema.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { until } from '../helpers/until.ts';
import { startAvailabilityGateway, type AvailabilityGateway } from './harness.ts';

const TOKEN = 'probe-upstream-credential-5d2e';
let upstream: SdkUpstream;
let gw: AvailabilityGateway;

beforeAll(async () => {
  upstream = await startSdkServer(TOKEN);
  const key = apiKey('agent', 'acme');
  gw = await startAvailabilityGateway([
    plan('pro', { tier: 1 }),
    account('acme', 'pro'),
    ...key.docs,
    secret('tools-token', { authorization: `Bearer ${TOKEN}` }),
    mcpServer('tools', { url: upstream.url, headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }] }),
    // The same upstream without its credential: every request answered 401.
    mcpServer('locked', { url: upstream.url, prefix: 'locked' }),
  ]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

function server(name: string): CompiledMcpServer {
  const s = gw.snapshot.mcpServers?.[name];
  if (!s) throw new Error(`no McpServer ${name}`);
  return s;
}

async function mcpRounds(n: number, ...names: string[]): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.all(names.map((s) => gw.avail.monitor.roundMcp(server(s))));
  await gw.avail.health.refresh();
}

const stateOf = async (subject: string): Promise<{ state: string; message: string } | undefined> =>
  (await gw.avail.board.states()).find((s) => s.model === subject);

describe('McpServer probes', () => {
  it('an answering server is operational; its probe session is closed; no tool called, no account billed', async () => {
    const deletes = upstream.deletes();
    await mcpRounds(1, 'tools');
    const s = await stateOf('mcp:tools');
    expect(s?.state).toBe('operational');
    expect(s?.message).toMatch(/^tools: OK in \d+ ms$/);
    expect(upstream.deletes()).toBe(deletes + 1);
    expect(upstream.sessions()).toBe(0);
    expect(upstream.calls).toEqual([]);
    expect(gw.sink.events).toEqual([]);
  });

  it('a server that refuses the credential goes partial then major, and an incident opens for it', async () => {
    await mcpRounds(1, 'locked');
    expect(await stateOf('mcp:locked')).toMatchObject({ state: 'partial_outage', message: 'locked: initialize answered HTTP 401' });
    await mcpRounds(1, 'locked');
    expect((await stateOf('mcp:locked'))?.state).toBe('major_outage');
    const incidents = await gw.avail.history.incidents(0);
    expect(incidents.find((i) => i.models.includes('mcp:locked'))).toMatchObject({ source: 'probe', status: 'investigating' });
    expect(incidents.some((i) => i.models.includes('mcp:tools'))).toBe(false);
    // The credential of the other server never reached the status (nor the client's key).
    expect(JSON.stringify(await gw.avail.board.states())).not.toContain(TOKEN);
  });

  it('shows both on the Statuspage JSON and the /status page, beside the models', async () => {
    await mcpRounds(1, 'tools');
    const res = await fetch(`${gw.url}/status/api/v2/components.json`);
    const components = spComponents.parse(await res.json()).components;
    expect(components.find((c) => c.name === 'mcp:tools')).toMatchObject({ status: 'operational', description: 'MCP server' });
    expect(components.find((c) => c.name === 'mcp:locked')).toMatchObject({ status: 'major_outage', description: 'MCP server' });
    const unresolved = spIncidents.parse(await (await fetch(`${gw.url}/status/api/v2/incidents/unresolved.json`)).json());
    expect(unresolved.incidents.map((i) => i.name)).toContain('mcp:locked: a major outage');
    const page = await (await fetch(`${gw.url}/status`)).text();
    expect(page).toContain('mcp:tools');
    expect(page).toContain('locked: initialize answered HTTP 401');
    const badge = await fetch(`${gw.url}/status/badge/mcp:locked.svg`);
    expect(badge.status).toBe(200);
    expect(await badge.text()).toContain('major outage');
  });

  it('the prober schedules McpServers on its interval, as it does models', async () => {
    const before = gw.avail.monitor.rounds.get('mcp:tools') ?? 0;
    gw.avail.monitor.start();
    try {
      await until(() => (gw.avail.monitor.rounds.get('mcp:tools') ?? 0) > before && (gw.avail.monitor.rounds.get('mcp:locked') ?? 0) > 2, 60_000);
    } finally {
      await gw.avail.monitor.stop();
    }
    await until(() => upstream.sessions() === 0, 30_000);
  });
});
