// The official MCP conformance runner (@modelcontextprotocol/conformance) against two reference servers none of us
// wrote, each directly and through /mcp/<server>: server-everything, and the conformance suite's own reference server
// (the server its scenarios are written against). Every check a server passes alone passes through the gateway. The
// runner sends no headers of its own, so a loopback forwarder adds the key's Authorization, as a configured client
// would.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MCP_SETTINGS } from '../../gateway/mcp/settings.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan } from '../helpers/manifests.ts';
import { startConformanceServer, startEverything, type Upstream } from '../helpers/mcp-upstreams.ts';
import { ROOT } from '../helpers/process.ts';

const key = apiKey('conformance', 'acme');
let everything: Upstream;
let reference: Upstream;
let gw: TestGateway;
const forwarders: Server[] = [];

interface Check {
  id: string;
  status: string;
  details?: { statusCode?: number; body?: { error?: { code?: number } } };
}

interface Run {
  /** Each scenario's line of the runner's summary ("✓ ping: 1 passed, 0 failed"), by scenario. */
  summary: Map<string, string>;
  /** Each scenario's checks as the runner saved them (its checks.json), by scenario. */
  checks: Map<string, Check[]>;
  total: string;
}

function run(url: string): Promise<Run> {
  const bin = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const out = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, 'server', '--url', url, '-o', out], { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }, (_err, stdout, stderr) => {
      const text = `${stdout}\n${stderr}`;
      const summary = new Map([...text.matchAll(/^[✓✗] ([\w-]+): (.*)$/gm)].map((m) => [m[1] as string, m[0]]));
      // One folder per scenario: server-<scenario>-<ISO time>/checks.json.
      const checks = new Map(
        readdirSync(out).map((dir) => [
          dir.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, ''),
          JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[],
        ]),
      );
      rmSync(out, { recursive: true, force: true });
      resolve({ summary, checks, total: /^Total: .*$/m.exec(text)?.[0] ?? `no summary:\n${text.slice(-2000)}` });
    });
  });
}

const passed = (r: Run): string[] => [...r.summary].filter(([, line]) => line.startsWith('✓')).map(([name]) => name);

/** Every check (scenario/check id) that succeeds directly and not through the gateway, with its result through it. */
function lostChecks(direct: Run, through: Run): { key: string; check: Check | undefined }[] {
  const lost: { key: string; check: Check | undefined }[] = [];
  for (const [scenario, checks] of direct.checks) {
    const after = through.checks.get(scenario) ?? [];
    checks.forEach((c, i) => {
      // The n-th check of that id in the scenario, as a scenario may repeat an id.
      const nth = checks.slice(0, i).filter((b) => b.id === c.id).length;
      const same = after.filter((a) => a.id === c.id)[nth];
      if (c.status === 'SUCCESS' && same?.status !== 'SUCCESS') lost.push({ key: `${scenario}/${c.id}`, check: same });
    });
  }
  return lost;
}

/** Nothing lost: every check passing directly passes through the gateway. */
function expectSameChecks(direct: Run, through: Run): void {
  expect(through.checks.size, through.total).toBe(direct.checks.size);
  expect(
    lostChecks(direct, through).map((l) => l.key),
    through.total,
  ).toEqual([]);
}

/**
 * A loopback forwarder to the gateway's /mcp/<server> that adds the key; its URL ends in /mcp as the runner expects.
 * It listens before the gateway starts, so that its origin is one the gateway allows (SVC_MCP_ALLOWED_ORIGINS): the
 * runner's DNS-rebinding scenario expects a request from the server's own loopback origin served and a forged one
 * refused. Headers pass through unchanged (Host is the gateway's, as a reverse proxy's would be).
 */
async function forwarder(server: string): Promise<string> {
  const fwd = createServer((req, res) => {
    const target = new URL(`${gw.url}/mcp/${server}`);
    const up = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: req.method,
        headers: { ...req.headers, host: target.host, authorization: `Bearer ${key.key}` },
      },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    req.pipe(up);
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
  });
  forwarders.push(fwd);
  await new Promise<void>((r) => fwd.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(fwd.address() as AddressInfo).port}/mcp`;
}

/** Runs the runner directly and through the gateway, and prints both counts. */
async function compare(server: string, upstream: Upstream): Promise<{ direct: Run; through: Run }> {
  const direct = await run(upstream.url);
  const through = await run(forwarded[server] as string);
  const lost = lostChecks(direct, through).map((l) => l.key);
  console.log(
    `conformance ${server}: directly ${passed(direct).length}/${direct.summary.size} scenarios (${direct.total}); ` +
      `through /mcp/${server} ${passed(through).length}/${through.summary.size} scenarios (${through.total})` +
      (lost.length ? `; checks passing directly only: ${lost.join(', ')}` : ''),
  );
  return { direct, through };
}

const forwarded: Record<string, string> = {};

beforeAll(async () => {
  [everything, reference] = await Promise.all([startEverything(), startConformanceServer()]);
  for (const server of ['everything', 'reference']) forwarded[server] = await forwarder(server);
  const origins = Object.values(forwarded).map((u) => new URL(u).origin);
  gw = await startGateway(
    [
      plan('pro', { tier: 1 }),
      account('acme', 'pro'),
      ...key.docs,
      mcpServer('everything', { url: everything.url }),
      mcpServer('reference', { url: reference.url }),
    ],
    { mcp: { ...DEFAULT_MCP_SETTINGS, allowedOrigins: origins } },
  );
}, 60_000);

afterAll(async () => {
  for (const f of forwarders) {
    f.closeAllConnections();
    await new Promise((r) => f.close(r));
  }
  await gw?.close();
  await everything?.close();
  await reference?.close();
});

describe('the MCP conformance runner', () => {
  it('passes through the gateway every check server-everything passes directly', async () => {
    const { direct, through } = await compare('everything', everything);
    expect(direct.summary.size, direct.total).toBeGreaterThanOrEqual(25);
    expectSameChecks(direct, through);
  }, 1_500_000);

  it("passes through the gateway every check the conformance suite's reference server passes directly", async () => {
    const { direct, through } = await compare('reference', reference);
    // The suite's own server passes its whole suite (30 scenarios with runner 0.1.16): a run that lost it tests nothing.
    expect(passed(direct).length, direct.total).toBeGreaterThanOrEqual(30);
    expectSameChecks(direct, through);
  }, 1_500_000);
});
