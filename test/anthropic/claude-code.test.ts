// A real coding agent end to end: Claude Code (npm @anthropic-ai/claude-code, a native binary) in print mode
// with its base URL on the gateway's /anthropic and a gateway key as its auth token, served once by an
// Anthropic-format upstream and once by an OpenAI-format one. The fakes make it call its Read tool on a file and
// then answer with what the tool returned, so the answer proves the whole tool loop crossed the translators.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedCall } from '../fakes/anthropic-upstream.ts';
import { ROOT } from '../helpers/process.ts';
import { startRecordingProxy, type SeenRequest } from './recording-proxy.ts';
import { startEnv, type Env } from './setup.ts';

const CLAUDE = join(ROOT, 'node_modules/.bin/claude');
const SECRET = 'the-answer-is-4217';
const HOW_TO = `Claude Code could not run. It is a devDependency: \`npm ci\` installs @anthropic-ai/claude-code and its native
package (@anthropic-ai/claude-code-linux-x64 here), and its postinstall copies the binary to
node_modules/@anthropic-ai/claude-code/bin/claude.exe. If npm ran with --ignore-scripts, run
\`node node_modules/@anthropic-ai/claude-code/install.cjs\`; then \`node_modules/.bin/claude --version\` must print a version.`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, cwd: string, timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(CLAUDE, args, { cwd, env, timeout: timeoutMs, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (((err as { code?: unknown }).code as number | null) ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr: `${stderr}${err && !stdout ? `\n${err.message}` : ''}` });
    });
  });
}

/** A clean environment: no Anthropic or proxy variables of the machine, a temporary HOME and config dir. */
function agentEnv(home: string, baseUrl: string, key: string, model: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_AUTH_TOKEN: key,
    ANTHROPIC_MODEL: model,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** The text of the tool result in a request, if it carries one (Anthropic tool_result or OpenAI tool message). */
function toolResultText(body: Record<string, unknown>): string | null {
  for (const m of (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    if (m.role === 'tool') return String(m.content);
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<{ type: string; content?: unknown }>) {
      if (b.type !== 'tool_result') continue;
      return typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
    }
  }
  return null;
}

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
