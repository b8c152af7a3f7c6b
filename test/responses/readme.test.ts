// The Responses API examples of docs/api.md, run as a newcomer would: against `npm start` (demo config, mock provider):
// the curl call, the SDK stream, and Codex CLI with the docs' config.toml.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { docExample } from '../helpers/docs.ts';
import { exampleCode, runExampleCommand } from '../helpers/example-files.ts';

let gw: GatewayProcess;
let env: NodeJS.ProcessEnv;
let port: string;

beforeAll(async () => {
  gw = await startGatewayProcess({});
  port = new URL(gw.url).port;
  // The machine's own OpenAI settings must not leak into the examples.
  const { OPENAI_API_KEY: _k, OPENAI_BASE_URL: _b, CODEX_HOME: _c, ...rest } = process.env;
  env = { ...rest, SVC_KEY: gw.keys['demo-builder'] };
});

afterAll(async () => {
  await gw?.stop();
});

const local = (text: string): string => text.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);

describe('docs/api.md: Responses API', () => {
  it('answers the curl example on the demo config', () => {
    const script = local(docExample('docs/api.md', 'responses')).replace(/^export SVC_KEY=.*$/m, '');
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env, encoding: 'utf8' });
    const body = JSON.parse(out) as { object: string; model: string; status: string; output: Array<{ type: string; content: Array<{ text: string }> }> };
    expect(body.object).toBe('response');
    expect(body.model).toBe('mock-mini');
    expect(body.status).toBe('completed');
    expect(body.output[0]?.content[0]?.text).toContain('You said: Hello');
  });

  it('runs the SDK example on the demo config: examples/responses.mjs, with the command shown', () => {
    expect(docExample('docs/api.md', 'responses-sdk')).toBe(exampleCode('responses'));
    const out = runExampleCommand(docExample('docs/api.md', 'responses-sdk-run'), env, gw.url);
    expect(out).toContain('Hello from mock-pro. You said: Hello');
    expect(out).toMatch(/\[mock-pro, \d+ output tokens, completed\]/);
  });

  it('runs Codex CLI with the config and command of docs/api.md', () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-readme-codex-'));
    writeFileSync(join(home, 'config.toml'), local(docExample('docs/api.md', 'codex-config')));
    const command = docExample('docs/api.md', 'codex').replace('SVC_KEY=sk-svc-... ', '');
    // From the repository, where `npx codex` finds the devDependency (read-only sandbox: it changes nothing).
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', `${command} < /dev/null`], {
      cwd: ROOT,
      env: { ...env, HOME: home, CODEX_HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(out).toContain('Hello from mock-pro.');
  }, 150_000);
});
