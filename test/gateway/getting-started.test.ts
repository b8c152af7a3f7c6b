// docs/getting-started.md, step 2, run as written: the reader's own manifests with a model on OpenAI and one on
// Anthropic, upstream keys from the environment, both called in the other dialect. The upstreams are the fakes (the
// only fakes), at the URLs the example names replaced.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { isProbe, startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { docExample } from '../helpers/docs.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let gw: GatewayProcess;

/** The `npm start` line's environment, as the example writes it. */
function runEnv(): Record<string, string> {
  const line = docExample('docs/getting-started.md', 'my-gateway-run').trim();
  expect(line).toMatch(/ npm start$/);
  return Object.fromEntries(
    line
      .replace(/ npm start$/, '')
      .split(' ')
      .map((kv) => kv.split('=') as [string, string]),
  );
}

/** The JSON documents curl printed one after the other (without newlines between them). */
function jsonValues(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' && depth++ === 0) start = i;
    else if (c === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)) as Record<string, unknown>);
  }
  return out;
}

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeUpstream('openai'), startFakeAnthropic('anthropic')]);
  const dir = mkdtempSync(join(tmpdir(), 'svc-getting-started-'));
  const manifests = docExample('docs/getting-started.md', 'my-gateway')
    .replace('https://api.openai.com/v1', openai.baseUrl)
    .replace('https://api.anthropic.com', anthropic.baseUrl);
  writeFileSync(join(dir, 'my-gateway.yaml'), manifests);
  const env = runEnv();
  gw = await startGatewayProcess({ ...env, SVC_CONFIG: join(dir, env.SVC_CONFIG as string) });
});

afterAll(async () => {
  await Promise.all([gw?.stop(), openai?.close(), anthropic?.close()]);
});

describe('docs/getting-started.md: a real OpenAI or Anthropic account', () => {
  it('prints the key of the example', () => {
    expect(Object.keys(gw.keys)).toEqual(['me']);
  });

  it('runs the calls as written: each model in the other dialect, with the upstream key from the environment', async () => {
    const script = docExample('docs/getting-started.md', 'my-gateway-calls')
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${new URL(gw.url).port}`)
      .replace(/^export SVC_KEY=.*$/m, '');
    // Not execFileSync: the fake upstreams answer from this process's event loop.
    const { stdout: out } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      env: { ...process.env, SVC_KEY: gw.keys.me },
      encoding: 'utf8',
    });
    const [chat, message, me] = jsonValues(out);
    expect(chat).toMatchObject({ object: 'chat.completion', model: 'claude-haiku-4-5' });
    expect(message).toMatchObject({ type: 'message', model: 'gpt-4o-mini' });
    expect(me).toMatchObject({ account: 'my-team', monthly_budget_usd: 10 });
    const env = runEnv();
    const toAnthropic = anthropic.calls.filter((c) => c.path.startsWith('/v1/messages'));
    expect(toAnthropic.map((c) => c.headers['x-api-key'])).toContain(env.ANTHROPIC_API_KEY);
    const toOpenai = openai.calls.filter((c) => !isProbe(c));
    expect(toOpenai.map((c) => c.headers.authorization)).toEqual([`Bearer ${env.OPENAI_API_KEY}`]);
  });
});
