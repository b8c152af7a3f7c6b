// The examples of docs/guardrails.md, run as a newcomer would: the setup commands in an empty directory (the demo's
// config copied from the checkout, the guardrail written beside it), the gateway started on that folder as the page's
// last setup line says, then the curl calls as written with the demo-builder key it printed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { ROOT, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let gw: GatewayProcess;
let env: NodeJS.ProcessEnv;
let port: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-guardrails-doc-'));
  const setup = docExample('docs/guardrails.md', 'guardrail-setup');
  const lines = setup.trim().split('\n');
  // The last line starts the gateway; the test starts the same process itself, on the same folder.
  expect(lines.at(-1)).toBe('npm start -- --config guarded');
  const script = lines.slice(0, -1).join('\n').replaceAll('gateway/config/demo.yaml', join(ROOT, 'gateway/config/demo.yaml'));
  execFileSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir });
  gw = await startGatewayProcess({}, ['--config', join(dir, 'guarded')]);
  port = new URL(gw.url).port;
  env = { ...process.env, SVC_KEY: gw.keys['demo-builder'] };
});

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(example: string): Record<string, unknown> {
  const script = example.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
  return JSON.parse(execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env, encoding: 'utf8', cwd: dir })) as Record<string, unknown>;
}

describe('docs/guardrails.md on the demo', () => {
  it('refuses a prompt holding an AWS key with the error the page shows', () => {
    const body = run(docExample('docs/guardrails.md', 'guardrail-block'));
    const shown = docExample('docs/guardrails.md', 'guardrail-block');
    expect(shown).toContain('AKIAZ7Q3XKQ4PLMNB2WE');
    // The answer the page prints right after the example.
    const page = readFileSync(join(ROOT, 'docs/guardrails.md'), 'utf8');
    const after = page.slice(page.indexOf('<!-- example:guardrail-block -->'));
    const printed = /```json\n(.*)\n```/.exec(after)?.[1];
    expect(body).toEqual(JSON.parse(printed ?? 'null'));
    expect((body.error as { code: string }).code).toBe('content_blocked');
  });

  it('masks an email before the upstream sees it (the echoed prompt shows the placeholder)', () => {
    const body = run(docExample('docs/guardrails.md', 'guardrail-mask')) as { choices: Array<{ text: string }> };
    expect(body.choices[0]!.text.startsWith('Write to <EMAIL_1>: ')).toBe(true);
    expect(JSON.stringify(body)).not.toContain('jane.doe@example.com');
  });
});
