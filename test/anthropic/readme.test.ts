// The Anthropic examples of docs/api.md, run as a newcomer would: against `npm start` (demo config, mock provider).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { docExample } from '../helpers/docs.ts';
import { exampleCode, runExampleCommand } from '../helpers/example-files.ts';

let gw: GatewayProcess;
let env: NodeJS.ProcessEnv;
let port: string;

beforeAll(async () => {
  gw = await startGatewayProcess({});
  port = new URL(gw.url).port;
  // The machine's own Anthropic settings must not leak into the examples.
  const { ANTHROPIC_API_KEY: _k, ANTHROPIC_AUTH_TOKEN: _t, ANTHROPIC_BASE_URL: _b, ...rest } = process.env;
  env = { ...rest, SVC_KEY: gw.keys['demo-builder'] };
});

afterAll(async () => {
  await gw?.stop();
});

describe('docs/api.md: Anthropic-compatible API', () => {
  it('answers the curl example on the demo config', () => {
    const script = docExample('docs/api.md', 'anthropic')
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
      .replace(/^export SVC_KEY=.*$/m, '');
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env, encoding: 'utf8' });
    const body = JSON.parse(out) as { type: string; model: string; content: Array<{ type: string; text: string }>; stop_reason: string };
    expect(body.type).toBe('message');
    expect(body.model).toBe('mock-pro');
    expect(body.content[0]?.text).toContain('You said: Hello');
    expect(body.stop_reason).toBe('end_turn');
  });

  it('runs the SDK example on the demo config: examples/anthropic.mjs, with the command shown', () => {
    expect(docExample('docs/api.md', 'anthropic-sdk')).toBe(exampleCode('anthropic'));
    const out = runExampleCommand(docExample('docs/api.md', 'anthropic-sdk-run'), env, gw.url);
    expect(out).toContain('Hello from mock-pro. You said: Hello');
    expect(out).toMatch(/\[mock-pro, \d+ output tokens, end_turn\]/);
  });

  it('refuses the free demo key on the Anthropic endpoint, in Anthropic shape', async () => {
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': gw.keys['demo-free'] as string, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-mini', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  });
});
