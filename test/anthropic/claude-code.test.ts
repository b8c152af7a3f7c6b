// A real coding agent end to end: Claude Code (npm @anthropic-ai/claude-code, a native binary) in print mode
// with its base URL on the gateway's /anthropic and a gateway key as its auth token, served once by an
// Anthropic-format upstream and once by an OpenAI-format one. The fakes make it call its Read tool on a file and
// then answer with what the tool returned, so the answer proves the whole tool loop crossed the translators.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedCall } from '../fakes/anthropic-upstream.ts';
import { CLAUDE, CLAUDE_HOW_TO as HOW_TO, claudeEnv as agentEnv, runClaude as run, toolResultText } from '../helpers/claude-code.ts';
import { startRecordingProxy, type SeenRequest } from './recording-proxy.ts';
import { startEnv, type Env } from './setup.ts';

const SECRET = 'the-answer-is-4217';

let env: Env;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let dir: string;

beforeAll(async () => {
  env = await startEnv();
  proxy = await startRecordingProxy(env.gw.url);
  dir = mkdtempSync(join(tmpdir(), 'svc-claude-code-'));
  writeFileSync(join(dir, 'hello.txt'), `${SECRET}\n`);
  const file = join(dir, 'hello.txt');
  env.anthropic.fallback = (call: RecordedCall) => {
    const result = toolResultText(call.body);
    if (result !== null) return { kind: 'reply', text: `CC-OK ${result.includes(SECRET) ? SECRET : 'tool result missing'}` };
    return { kind: 'reply', text: 'Reading it.', tools: [{ id: 'toolu_cc_1', name: 'Read', input: { file_path: file } }] };
  };
  env.openai.fallback = (call) => {
    const result = toolResultText(call.body);
    if (result !== null) return { kind: 'reply', content: `CC-OK ${result.includes(SECRET) ? SECRET : 'tool result missing'}` };
    return { kind: 'reply', content: 'Reading it.', toolCalls: [{ id: 'call_cc_1', name: 'Read', arguments: JSON.stringify({ file_path: file }) }] };
  };
});

afterAll(async () => {
  await proxy?.close();
  await env?.close();
});

describe('Claude Code through the gateway', () => {
  it('runs here (the binary is installed and starts)', async () => {
    if (!existsSync(CLAUDE)) throw new Error(`${CLAUDE} is missing.\n${HOW_TO}`);
    const r = await run(['--version'], agentEnv(dir, 'http://127.0.0.1:9', 'x', 'x'), dir, 30_000);
    if (r.code !== 0 || !/Claude Code/.test(r.stdout)) throw new Error(`claude --version exited ${r.code}: ${r.stdout}${r.stderr}\n${HOW_TO}`);
  }, 40_000);

  it.each([
    ['an Anthropic-format upstream', 'claude-test', () => env.anthropic.calls],
    ['an OpenAI-format upstream', 'gpt-test', () => env.openai.calls],
  ])(
    'answers a prompt with a tool round trip, served by %s',
    async (_name, model, calls) => {
      const before = proxy.seen.length;
      const r = await run(['-p', 'What does hello.txt say?'], agentEnv(dir, `${proxy.url}/anthropic`, env.keys.builder, model), dir);
      if (r.code !== 0) throw new Error(`claude -p exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}\n${HOW_TO}`);
      expect(r.stdout).toContain(`CC-OK ${SECRET}`);
      const sent = proxy.seen.slice(before).filter((s) => s.url.startsWith('/anthropic/v1/messages'));
      expect(sent.length).toBeGreaterThanOrEqual(2); // the tool call, then the answer
      for (const s of sent) expectClaudeCodeShape(s, env.keys.builder);
      expect(calls().length).toBeGreaterThanOrEqual(2);
      const events = env.gw.sink.events.filter((e) => e.requestedModel === model && e.endpoint === 'messages');
      expect(events.length).toBeGreaterThanOrEqual(2);
      expect(events.every((e) => e.status === 200 && e.stream && e.inputTokens > 0)).toBe(true);
    },
    150_000,
  );
});

/** What Claude Code sends (recorded in docs/api.md): keep this in step with what the binary really does. */
function expectClaudeCodeShape(s: SeenRequest, key: string): void {
  expect(s.method).toBe('POST');
  expect(s.url).toBe('/anthropic/v1/messages?beta=true');
  expect(s.headers.authorization).toBe(`Bearer ${key}`);
  expect(s.headers['x-api-key']).toBeUndefined();
  expect(s.headers['anthropic-version']).toBe('2023-06-01');
  expect(String(s.headers['anthropic-beta'])).toContain('claude-code-20250219');
  const body = JSON.parse(s.body) as Record<string, unknown>;
  expect(body.stream).toBe(true);
  expect(Array.isArray(body.tools) && body.tools.length).toBeGreaterThanOrEqual(8);
  expect(JSON.stringify(body.system)).toContain('"cache_control"');
  expect(typeof body.max_tokens).toBe('number');
}
