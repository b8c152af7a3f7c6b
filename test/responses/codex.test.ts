// A real coding agent end to end: Codex CLI (npm @openai/codex, a native binary) in `codex exec` with a custom
// model provider on the gateway (wire_api = "responses"), a gateway key in its env_key, a read-only sandbox, and
// HOME / CODEX_HOME in a temporary folder so nothing of the machine's own config is used. Nothing else is set:
// Codex's defaults (its built-in web_search tool included, which these upstreams cannot run) must just work.
// Served once by an OpenAI-format (Chat Completions) upstream and once by an Anthropic-format one: a one-turn task,
// and a task where the fakes make it run a shell command on a file and then answer with what the command printed.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedCall } from '../fakes/recording-server.ts';
import { startRecordingProxy, type SeenRequest } from '../anthropic/recording-proxy.ts';
import { ROOT } from '../helpers/process.ts';
import { startEnv, type Env } from './setup.ts';

const CODEX = join(ROOT, 'node_modules/.bin/codex');
const SECRET = 'the-codex-answer-is-9931';
const HOW_TO = `Codex CLI could not run. It is a devDependency: \`npm ci\` installs @openai/codex and its native package
(@openai/codex-linux-x64 here); \`node_modules/.bin/codex --version\` must print a version.`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string>, cwd: string, timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(CODEX, args, { cwd, env, timeout: timeoutMs, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: `${stderr}${err && !stdout ? `\n${err.message}` : ''}` });
    });
    child.stdin?.end(); // `codex exec` reads extra input from a piped stdin: give it none
  });
}

/** Codex's own folder: a config with one model provider, the gateway, speaking the Responses API; nothing else. */
function codexHome(baseUrl: string): string {
  const home = mkdtempSync(join(tmpdir(), 'svc-codex-home-'));
  writeFileSync(
    join(home, 'config.toml'),
    [
      'model_provider = "svc"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[model_providers.svc]',
      'name = "svc-gateway"',
      `base_url = "${baseUrl}"`,
      'env_key = "SVC_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  return home;
}

function codexEnv(home: string, key: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: home, TMPDIR: tmpdir(), LANG: 'C.UTF-8', SVC_KEY: key };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((b: { text?: unknown; content?: unknown }) => (typeof b.text === 'string' ? b.text : contentText(b.content))).join('\n')
    : '';
}

/** The tool output a request carries (OpenAI tool message or Anthropic tool_result), if any. */
function toolResultText(body: Record<string, unknown>): string | null {
  for (const m of (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    if (m.role === 'tool') return contentText(m.content);
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Array<{ type: string; content?: unknown }>) if (b.type === 'tool_result') return contentText(b.content);
  }
  return null;
}

function wantsTool(body: Record<string, unknown>): boolean {
  return JSON.stringify(body.messages).includes('What does hello.txt say');
}

let env: Env;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let dir: string;

beforeAll(async () => {
  env = await startEnv();
  proxy = await startRecordingProxy(env.gw.url);
  dir = mkdtempSync(join(tmpdir(), 'svc-codex-work-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'hello.txt'), `${SECRET}\n`);
  const cmd = JSON.stringify({ cmd: 'cat hello.txt' });
  env.anthropic.fallback = (call: RecordedCall) => {
    const result = toolResultText(call.body);
    if (result !== null) return { kind: 'reply', text: `CX-OK ${result.includes(SECRET) ? SECRET : `tool result missing: ${result.slice(0, 200)}`}` };
    if (wantsTool(call.body))
      return { kind: 'reply', text: 'Reading it.', tools: [{ id: 'toolu_cx_1', name: 'exec_command', input: { cmd: 'cat hello.txt' } }] };
    return { kind: 'reply', text: 'CX-ONE-TURN' };
  };
  env.openai.fallback = (call) => {
    const result = toolResultText(call.body);
    if (result !== null) return { kind: 'reply', content: `CX-OK ${result.includes(SECRET) ? SECRET : `tool result missing: ${result.slice(0, 200)}`}` };
    if (wantsTool(call.body)) return { kind: 'reply', content: 'Reading it.', toolCalls: [{ id: 'call_cx_1', name: 'exec_command', arguments: cmd }] };
    return { kind: 'reply', content: 'CX-ONE-TURN' };
  };
});

afterAll(async () => {
  await proxy?.close();
  await env?.close();
});

const EXEC = ['exec', '--skip-git-repo-check', '--sandbox', 'read-only'];

describe('Codex CLI through the gateway', () => {
  it('runs here (the binary is installed and starts)', async () => {
    if (!existsSync(CODEX)) throw new Error(`${CODEX} is missing.\n${HOW_TO}`);
    const r = await run(['--version'], codexEnv(dir, 'x'), dir, 30_000);
    if (r.code !== 0 || !/codex-cli/.test(r.stdout)) throw new Error(`codex --version exited ${r.code}: ${r.stdout}${r.stderr}\n${HOW_TO}`);
  }, 40_000);

  it.each([
    ['an OpenAI-format upstream', 'gpt-chat'],
    ['an Anthropic-format upstream', 'claude-test'],
  ])(
    'completes a one-turn task, served by %s',
    async (_name, model) => {
      const before = proxy.seen.length;
      const home = codexHome(`${proxy.url}/v1`);
      const r = await run([...EXEC, '-m', model, 'Reply with the word CX-ONE-TURN.'], codexEnv(home, env.keys.builder), dir);
      if (r.code !== 0) throw new Error(`codex exec exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      expect(r.stdout).toContain('CX-ONE-TURN');
      const sent = proxy.seen.slice(before).filter((s) => s.url === '/v1/responses');
      expect(sent).toHaveLength(1);
      expectCodexShape(sent[0] as SeenRequest, env.keys.builder, model);
      const e = env.gw.sink.events.at(-1);
      // Codex's default web_search tool was left out of the upstream request (the upstream cannot run it), and said so.
      expect(e).toMatchObject({ endpoint: 'responses', requestedModel: model, stream: true, status: 200, droppedTools: ['web_search'] });
      const upstream = model === 'claude-test' ? env.anthropic.calls : env.openai.calls;
      const tools = JSON.stringify(upstream.at(-1)?.body.tools);
      expect(tools).toContain('exec_command');
      expect(tools).not.toContain('web_search');
    },
    150_000,
  );

  it.each([
    ['an OpenAI-format upstream', 'gpt-chat'],
    ['an Anthropic-format upstream', 'claude-test'],
  ])(
    'runs a shell command and answers with its output, served by %s',
    async (_name, model) => {
      const before = proxy.seen.length;
      const home = codexHome(`${proxy.url}/v1`);
      const r = await run([...EXEC, '-m', model, 'What does hello.txt say? Use the shell.'], codexEnv(home, env.keys.builder), dir);
      if (r.code !== 0) throw new Error(`codex exec exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      expect(r.stdout).toContain(`CX-OK ${SECRET}`);
      const sent = proxy.seen.slice(before).filter((s) => s.url === '/v1/responses');
      expect(sent).toHaveLength(2); // the command, then the answer
      const second = JSON.parse(sent[1]?.body ?? '{}') as { input: Array<{ type?: string; call_id?: string; output?: unknown }> };
      const types = second.input.map((i) => i.type ?? 'message');
      expect(types).toContain('function_call');
      expect(second.input.find((i) => i.type === 'function_call_output')?.output).toEqual(expect.stringContaining(SECRET));
      const events = env.gw.sink.events.filter((e) => e.requestedModel === model && e.endpoint === 'responses').slice(-2);
      expect(events.map((e) => e.status)).toEqual([200, 200]);
    },
    150_000,
  );
});

/** What Codex sends (recorded in docs/api.md): keep this in step with what the binary really does. */
function expectCodexShape(s: SeenRequest, key: string, model: string): void {
  expect(s.method).toBe('POST');
  expect(s.headers.authorization).toBe(`Bearer ${key}`);
  expect(s.headers.accept).toBe('text/event-stream');
  expect(String(s.headers['user-agent'])).toMatch(/^codex_exec\//);
  expect(s.headers.originator).toBe('codex_exec');
  const body = JSON.parse(s.body) as Record<string, unknown>;
  expect(body).toMatchObject({ model, stream: true, store: false, tool_choice: 'auto', parallel_tool_calls: true, include: ['reasoning.encrypted_content'] });
  expect(body.previous_response_id).toBeUndefined();
  const tools = body.tools as Array<{ type: string; name?: string }>;
  expect(tools.some((t) => t.type === 'function' && t.name === 'exec_command')).toBe(true);
  expect(tools.some((t) => t.type === 'web_search')).toBe(true); // Codex's default: its built-in web search
  const input = body.input as Array<{ type?: string; role?: string }>;
  expect(input[0]).toMatchObject({ type: 'message', role: 'developer' });
}
