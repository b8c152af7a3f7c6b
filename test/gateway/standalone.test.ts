// npm start as a newcomer runs it: the demo config, keys printed once, the README's curl example.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { readmeExample } from '../helpers/readme.ts';

let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startGatewayProcess({});
});

afterAll(async () => {
  await gw?.stop();
});

describe('npm start (standalone, demo config)', () => {
  it('prints a key for each demo ApiKey once', () => {
    expect(Object.keys(gw.keys).sort()).toEqual(['demo-builder', 'demo-free']);
  });

  it('answers the README quickstart curl example', () => {
    const port = new URL(gw.url).port;
    const script = readmeExample('quickstart').replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`).replace(/^export SVC_KEY=.*$/m, '');
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, SVC_KEY: gw.keys['demo-builder'] }, encoding: 'utf8' });
    const body = JSON.parse(out) as { model: string; choices: Array<{ message: { content: string } }> };
    expect(body.model).toBe('mock-mini');
    expect(body.choices[0]?.message.content).toContain('You said: Hello');
  });

  it('serves models, health and readiness', async () => {
    const models = (await (await fetch(`${gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id).sort()).toEqual(['mock-embed', 'mock-mini', 'mock-pro']);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });

  it('never writes a key to its logs after printing it once (key-leak canary)', async () => {
    const key = gw.keys['demo-builder'] as string;
    const h = { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' };
    await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: h, body: '{"model":"mock-mini","messages":[{"role":"user","content":"hi"}]}' });
    await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: h, body: '{broken' });
    await fetch(`${gw.url}/v1/me`, { headers: h });
    await fetch(`${gw.url}/v1/nowhere`, { method: 'POST', headers: h, body: '{}' });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    await new Promise((r) => setTimeout(r, 100));
    const secret = key.slice(7);
    expect(gw.output().split(secret).length - 1).toBe(1);
    expect(metrics).not.toContain(secret);
    expect(metrics).toContain('svc_gateway_requests_total');
  });
});

describe('the command line', () => {
  it('prints help', async () => {
    const r = await runToExit(['--help']);
    expect(r.code).toBe(0);
    expect(r.output).toContain('Usage:');
    expect(r.output).toContain('SVC_CONFIG');
  });

  it('fails at start on a bad manifest, naming the file, the object and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bad-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, [
      'apiVersion: gateway.svc.dev/v1alpha1', 'kind: Plan', 'metadata: {name: p}', 'spec: {tier: 1}', '---',
      'apiVersion: gateway.svc.dev/v1alpha1', 'kind: ModelRoute', 'metadata: {name: broken}',
      'spec:', '  pricing: {inputPerMTokUsd: -1}', '  targets: [{name: t, provider: mock}]', '',
    ].join('\n'));
    const r = await runToExit([], { SVC_CONFIG: file });
    expect(r.code).toBe(1);
    expect(r.output).toContain(`${file}#2: ModelRoute/broken field spec.pricing.inputPerMTokUsd:`);
  });

  it('fails at start on a reference to a missing object', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bad-'));
    const file = join(dir, 'ref.yaml');
    writeFileSync(file, 'apiVersion: gateway.svc.dev/v1alpha1\nkind: Account\nmetadata: {name: a}\nspec: {planRef: nope}\n');
    const r = await runToExit([], { SVC_CONFIG: file });
    expect(r.code).toBe(1);
    expect(r.output).toContain('Account/a field spec.planRef: unknown Plan nope');
  });
});
