// The examples of docs/guardrails.md, run as a newcomer would: the setup commands in an empty directory (the demo's
// config copied from the checkout, the guardrail written beside it), the gateway started on that folder as the page's
// last setup line says, then the curl calls as written with the demo-builder key it printed.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { docExample } from '../helpers/docs.ts';
import { until } from '../helpers/until.ts';
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

describe('docs/guardrails.md remote checks', () => {
  it('has only valid Guardrail manifests in its YAML blocks', () => {
    const page = readFileSync(join(ROOT, 'docs/guardrails.md'), 'utf8');
    const blocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => b.includes('kind: Guardrail'));
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const b of blocks) {
      const parsed = parseManifests([{ source: 'docs', doc: parseYaml(b) as object }]);
      expect(parsed.errors.map(formatIssue)).toEqual([]);
      expect(parsed.set.guardrails).toHaveLength(1);
    }
  });
});

describe('docs/guardrails.md webhook on the demo', () => {
  let hookDir: string;
  let hook: ChildProcess | undefined;
  let hooked: GatewayProcess;
  let hookEnv: NodeJS.ProcessEnv;
  let hookedPort: string;

  beforeAll(async () => {
    hookDir = mkdtempSync(join(tmpdir(), 'svc-guardrails-hook-'));
    const hookPort = String(await freePort());
    const server = docExample('docs/guardrails.md', 'webhook-server').replaceAll('9099', hookPort);
    const lines = server.trim().split('\n');
    // The last line runs the service in the background; the test runs the same file itself, and stops it later.
    expect(lines.at(-1)).toBe('node hook.mjs &');
    execFileSync('bash', ['-euo', 'pipefail', '-c', lines.slice(0, -1).join('\n')], { cwd: hookDir });
    hook = spawn(process.execPath, ['hook.mjs'], { cwd: hookDir, stdio: 'ignore' });
    await until(
      () =>
        fetch(`http://127.0.0.1:${hookPort}/`, { method: 'POST', body: '{"texts":[]}' }).then(
          () => true,
          () => false,
        ),
      10_000,
      'webhook up',
      50,
    );
    const setup = docExample('docs/guardrails.md', 'webhook-guardrail').replaceAll('9099', hookPort);
    const setupLines = setup.trim().split('\n');
    expect(setupLines.at(-1)).toBe('npm start -- --config hooked');
    const script = setupLines.slice(0, -1).join('\n').replaceAll('gateway/config/demo.yaml', join(ROOT, 'gateway/config/demo.yaml'));
    execFileSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: hookDir });
    hooked = await startGatewayProcess({}, ['--config', join(hookDir, 'hooked')]);
    hookedPort = new URL(hooked.url).port;
    hookEnv = { ...process.env, SVC_KEY: hooked.keys['demo-builder'] };
  });

  afterAll(async () => {
    hook?.kill();
    await hooked?.stop();
    if (hookDir) rmSync(hookDir, { recursive: true, force: true });
  });

  const curl = (example: string): Record<string, unknown> =>
    JSON.parse(
      execFileSync('bash', ['-euo', 'pipefail', '-c', example.replaceAll('127.0.0.1:8080', `127.0.0.1:${hookedPort}`)], { env: hookEnv, encoding: 'utf8' }),
    ) as Record<string, unknown>;

  it('blocks what the webhook refuses with the error the page shows, passes the rest, and fails closed once it is gone', async () => {
    const shown = docExample('docs/guardrails.md', 'webhook-block');
    const page = readFileSync(join(ROOT, 'docs/guardrails.md'), 'utf8');
    const printed = /```json\n(.*)\n```/.exec(page.slice(page.indexOf('<!-- example:webhook-block -->')))?.[1];
    expect(curl(shown)).toEqual(JSON.parse(printed ?? 'null'));
    const clean = shown.replace('Summarise this confidential memo', 'Summarise this memo');
    expect((curl(clean).choices as unknown[]).length).toBe(1);
    hook?.kill();
    await until(() => hook?.exitCode !== null || hook?.signalCode !== null, 10_000, 'webhook stopped', 50);
    const refused = curl(clean) as { error: { message: string; code: string } };
    expect(refused.error.code).toBe('content_blocked');
    expect(refused.error.message).toContain('guardrail team-policy is unavailable (check policy: unavailable) and fails closed');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
