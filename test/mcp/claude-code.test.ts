// Claude Code as a real MCP client of the gateway: configured with docs/mcp.md's line (`claude mcp add --transport
// http NAME URL --header "Authorization: Bearer ..."`), it connects to /mcp, lists the gateway's tools and, driven by a
// scripted model behind the gateway's /anthropic, calls one through the gateway: the upstream MCP server runs it with
// the McpServer's own credential, the model gets its result back, and the call is one usage event at its price.
import { existsSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic, type RecordedCall } from '../fakes/anthropic-upstream.ts';
import { CLAUDE, CLAUDE_HOW_TO, claudeEnv, runClaude } from '../helpers/claude-code.ts';
import { docExample } from '../helpers/docs.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, mcpServer, route, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';

const UPSTREAM_TOKEN = 'mcp-upstream-credential-5d1e0b';
const MARK = 'echoed-through-the-gateway-7731';
/** 0.002 USD a call, in nano-USD. */
const PRICE_NANO = 2_000_000;

let model: FakeAnthropic;
let tools: SdkUpstream;
let gw: TestGateway;
let home: string;
let project: string;
const b = basics();

/** The tools the model was offered in a request, by name. */
function offered(call: RecordedCall): string[] {
  return ((call.body.tools as Array<{ name: string }> | undefined) ?? []).map((t) => t.name);
}

/** The MCP tools Claude Code names to the model in a request: offered, or deferred (loaded with its ToolSearch tool). */
function named(call: RecordedCall): string[] {
  return [...new Set([...offered(call), ...(JSON.stringify(call.body.messages ?? []).match(/mcp__[\w-]+/g) ?? [])])];
}

/** The last tool result of a conversation: the id of the tool call it answers, and its text. */
function lastToolResult(body: Record<string, unknown>): { id: string; text: string } | undefined {
  let last: { id: string; text: string } | undefined;
  for (const m of (body.messages as Array<{ content: unknown }> | undefined) ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const c of m.content as Array<{ type: string; tool_use_id?: string; content?: unknown }>) {
      if (c.type === 'tool_result') last = { id: String(c.tool_use_id), text: typeof c.content === 'string' ? c.content : JSON.stringify(c.content) };
    }
  }
  return last;
}

/** docs/mcp.md's Claude Code line on the test gateway (its base URL), as argv (the shell's quoting undone). */
function docsLine(base: string, key: string): string[] {
  const line = docExample('docs/mcp.md', 'mcp-claude-code').trim().replace('http://127.0.0.1:8080', base).replace('$SVC_KEY', key);
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? (m[2] as string)).slice(1);
}

beforeAll(async () => {
  [model, tools] = await Promise.all([startFakeAnthropic(), startSdkServer(UPSTREAM_TOKEN)]);
  gw = await startGateway([
    ...b.docs,
    route('claude-test', [{ name: 'anthropic-a', provider: 'anthropic', baseUrl: model.baseUrl, upstreamModel: 'claude-upstream' }]),
    secret('tools-token', { authorization: `Bearer ${UPSTREAM_TOKEN}` }),
    mcpServer('tools', {
      url: tools.url,
      prefix: 'sdk',
      headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }],
      tools: { exclude: ['admin_*'] },
      pricing: { perCallUsd: PRICE_NANO / 1e9 },
    }),
  ]);
  // The scripted model, as a real one works with Claude Code's deferred MCP tools: it loads the gateway's echo tool
  // with ToolSearch (or takes it from the tools if Claude Code offered it there), calls it, then answers with its
  // result (or says what it missed, which fails the test).
  model.fallback = (call) => {
    const last = lastToolResult(call.body);
    if (last?.id === 'toolu_mcp_1') return { kind: 'reply', text: `MCP-OK ${last.text.includes(MARK) ? MARK : `tool result without the mark: ${last.text}`}` };
    const echo = offered(call).find((n) => n.endsWith('__sdk__echo'));
    if (echo) return { kind: 'reply', text: 'Calling the tool.', tools: [{ id: 'toolu_mcp_1', name: echo, input: { text: MARK } }] };
    if (last?.id === 'toolu_search_1') return { kind: 'reply', text: `NOT-LOADED: ToolSearch gave ${last.text}; tools: ${offered(call).join(' ')}` };
    const listed = named(call).find((n) => n.endsWith('__sdk__echo'));
    if (!listed) return { kind: 'reply', text: `NO-MCP-TOOL: offered ${offered(call).join(' ')}; named ${named(call).join(' ')}` };
    return { kind: 'reply', text: 'Loading the tool.', tools: [{ id: 'toolu_search_1', name: 'ToolSearch', input: { query: `select:${listed}` } }] };
  };
  home = mkdtempSync(join(tmpdir(), 'svc-claude-mcp-'));
  project = join(home, 'project');
  mkdirSync(project);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([model?.close(), tools?.close()]);
});

describe('Claude Code configured with docs/mcp.md’s line', () => {
  it('adds the gateway as an HTTP MCP server and connects to it with the key', async () => {
    if (!existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing.\n${CLAUDE_HOW_TO}`);
    const env = claudeEnv(home, `${gw.url}/anthropic`, b.keys.builder, 'claude-test');
    const add = await runClaude(docsLine(gw.url, b.keys.builder), env, project, 60_000);
    if (add.code !== 0) throw new Error(`claude mcp add exited ${add.code}\nstdout: ${add.stdout}\nstderr: ${add.stderr}\n${CLAUDE_HOW_TO}`);
    const list = await runClaude(['mcp', 'list'], env, project, 90_000);
    expect(list.stdout).toMatch(/svc-tools: .*\/mcp \(HTTP\) - [✓✔] Connected/);
  }, 180_000);

  it('lists the gateway’s tools to the model and calls one through the gateway, at its price', async () => {
    const env = claudeEnv(home, `${gw.url}/anthropic`, b.keys.builder, 'claude-test');
    const modelCalls = model.calls.length;
    const usage = gw.sink.events.length;
    const r = await runClaude(['-p', 'Echo the mark with the gateway tool.', '--allowedTools', 'mcp__svc-tools'], env, project, 150_000);
    if (r.code !== 0) throw new Error(`claude -p exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\n${CLAUDE_HOW_TO}`);
    expect(r.stdout).toContain(`MCP-OK ${MARK}`);
    // Claude Code named the gateway's tools to the model under its own mcp__<server>__ prefix (the allowed ones only:
    // admin_delete is excluded by the McpServer), and loaded the one the model asked for with its schema.
    const calls = model.calls.slice(modelCalls);
    const first = calls.find((c) => named(c).length > 0);
    expect(
      first &&
        named(first)
          .filter((n) => n.startsWith('mcp__svc-tools__'))
          .sort(),
    ).toEqual(['echo', 'fail', 'grow', 'notify', 'slow'].map((t) => `mcp__svc-tools__sdk__${t}`));
    expect(calls.some((c) => offered(c).includes('mcp__svc-tools__sdk__echo'))).toBe(true);
    // The tool ran at the upstream with the McpServer's credential, and its result went back to the model.
    expect(tools.calls).toEqual(['echo']);
    expect(new Set(tools.authorizations)).toEqual(new Set([`Bearer ${UPSTREAM_TOKEN}`]));
    // One usage event for the tool call, at the McpServer's price, beside the model calls.
    const events = gw.sink.events.slice(usage);
    expect(events.filter((e) => e.endpoint === 'mcp')).toEqual([
      expect.objectContaining({ endpoint: 'mcp', requestedModel: 'mcp:tools/echo', upstream: 'tools', status: 200, costNano: PRICE_NANO }),
    ]);
    expect(events.filter((e) => e.endpoint === 'messages').length).toBeGreaterThanOrEqual(2);
  }, 180_000);
});
