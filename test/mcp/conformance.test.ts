// The official MCP conformance runner (@modelcontextprotocol/conformance) against server-everything directly and
// through /mcp/<server>: the gateway passes every scenario the server passes alone, and fails none it passes. The
// runner sends no headers of its own, so a loopback forwarder adds the key's Authorization, as a configured client would.
import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan } from '../helpers/manifests.ts';
import { startEverything, type Upstream } from '../helpers/mcp-upstreams.ts';
import { ROOT } from '../helpers/process.ts';

const key = apiKey('conformance', 'acme');
let everything: Upstream;
let gw: TestGateway;
let forwarder: Server;

/** Each scenario's line of the runner's summary ("✓ ping: 1 passed, 0 failed"), by scenario. */
function run(url: string): Promise<{ summary: Map<string, string>; total: string }> {
  const bin = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, 'server', '--url', url], { timeout: 600_000, maxBuffer: 64 * 1024 * 1024 }, (_err, stdout, stderr) => {
      const text = `${stdout}\n${stderr}`;
      const summary = new Map([...text.matchAll(/^[✓✗] ([\w-]+): (.*)$/gm)].map((m) => [m[1] as string, m[0]]));
      resolve({ summary, total: /^Total: .*$/m.exec(text)?.[0] ?? `no summary:\n${text.slice(-2000)}` });
    });
  });
}

beforeAll(async () => {
  everything = await startEverything();
  gw = await startGateway([plan('pro', { tier: 1 }), account('acme', 'pro'), ...key.docs, mcpServer('everything', { url: everything.url })]);
  const target = new URL(`${gw.url}/mcp/everything`);
  forwarder = createServer((req, res) => {
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
  await new Promise<void>((r) => forwarder.listen(0, '127.0.0.1', r));
}, 60_000);

afterAll(async () => {
  forwarder?.closeAllConnections();
  await new Promise((r) => forwarder?.close(r));
  await gw?.close();
  await everything?.close();
});

describe('the MCP conformance runner', () => {
  it('gives through the gateway, scenario by scenario, what it gives against server-everything directly', async () => {
    const direct = await run(everything.url);
    const through = await run(`http://127.0.0.1:${(forwarder.address() as AddressInfo).port}/mcp`);
    expect(direct.summary.size, direct.total).toBeGreaterThanOrEqual(25);
    expect(through.total).toBe(direct.total);
    expect([...through.summary.entries()]).toEqual([...direct.summary.entries()]);
  }, 1_500_000);
});
