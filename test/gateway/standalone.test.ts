// npm start as a newcomer runs it: the demo config, keys printed once, the README's curl and SDK examples.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runToExit, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { metricSum } from '../helpers/prom.ts';
import { docExample } from '../helpers/docs.ts';
import { exampleCode, runExampleCommand } from '../helpers/example-files.ts';

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

  it('answers the quickstart curl example of the README', () => {
    const port = new URL(gw.url).port;
    const script = docExample('README.md', 'quickstart')
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
      .replace(/^export SVC_KEY=.*$/m, '');
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, SVC_KEY: gw.keys['demo-builder'] }, encoding: 'utf8' });
    const body = JSON.parse(out) as { model: string; choices: Array<{ message: { content: string } }> };
    expect(body.model).toBe('mock-mini');
    expect(body.choices[0]?.message.content).toContain('You said: Hello');
  });

  it('answers the quickstart SDK example of the README: examples/quickstart.mjs, run with the command shown', () => {
    expect(docExample('README.md', 'quickstart-sdk')).toBe(exampleCode('quickstart'));
    const out = runExampleCommand(docExample('README.md', 'quickstart-sdk-run'), { ...process.env, SVC_KEY: gw.keys['demo-builder'] }, gw.url);
    expect(out).toBe('Hello from mock-mini. You said: Hello\n');
  });

  it('serves the built-in mock MCP server at /mcp: the SDK example of docs/mcp.md', () => {
    const port = new URL(gw.url).port;
    const code = docExample('docs/mcp.md', 'mcp-sdk').replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, SVC_KEY: gw.keys['demo-builder'] },
      encoding: 'utf8',
    });
    expect(out).toBe('demo-tools__echo demo-tools__add demo-tools__time\n5\n');
  });

  it('lets Claude Code, configured with the line of docs/mcp.md, connect to /mcp with the key as a header', () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-claude-home-'));
    const port = new URL(gw.url).port;
    const env = {
      ...process.env,
      HOME: home,
      SVC_KEY: gw.keys['demo-builder'] as string,
      PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
    };
    const add = docExample('docs/mcp.md', 'mcp-claude-code').replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
    execFileSync('bash', ['-euo', 'pipefail', '-c', add], { cwd: home, env, encoding: 'utf8' });
    const list = execFileSync('claude', ['mcp', 'list'], { cwd: home, env, encoding: 'utf8' });
    expect(list).toMatch(new RegExp(`svc-tools: http://127\\.0\\.0\\.1:${port}/mcp \\(HTTP\\) - . Connected`));
  }, 120_000);

  it('serves models, health and readiness', async () => {
    const models = (await (await fetch(`${gw.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id).sort()).toEqual([
      'mock-code',
      'mock-embed',
      'mock-image',
      'mock-mini',
      'mock-pro',
      'mock-rerank',
      'mock-tts',
      'mock-whisper',
      'omni-moderation-latest',
    ]);
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });

  it("serves /metrics on its metrics port only: the API port answers 404 in the caller's dialect (issue 18)", async () => {
    expect(gw.output()).toMatch(/svc-gateway listening on http:\/\/\S+\nsvc-gateway metrics on http:\/\/127\.0\.0\.1:\d+\/metrics\n/);
    expect(new URL(gw.metricsUrl).port).not.toBe(new URL(gw.url).port);
    const key = gw.keys['demo-builder'] as string;
    const call = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(call.status).toBe(200);
    await call.text();
    for (const path of ['/metrics', '/metrics?x=1']) {
      const res = await fetch(`${gw.url}${path}`);
      const text = await res.text();
      expect(res.status, path).toBe(404);
      expect(text).not.toContain('svc_gateway_');
      const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } };
      expect(typeof body.error?.message, text).toBe('string');
      expect(typeof body.error?.type, text).toBe('string');
    }
    const metrics = await fetch(`${gw.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(metricSum(text, 'svc_gateway_requests_total')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('svc_gateway_account_balance_usd{account="');
    expect((await fetch(`${gw.metricsUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.metricsUrl}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
    expect((await fetch(`${gw.metricsUrl}/v1/models`)).status).toBe(404);
  });

  it('never writes a key to its logs after printing it once (key-leak canary)', async () => {
    const key = gw.keys['demo-builder'] as string;
    const h = { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' };
    await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: h, body: '{"model":"mock-mini","messages":[{"role":"user","content":"hi"}]}' });
    await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: h, body: '{broken' });
    await fetch(`${gw.url}/v1/me`, { headers: h });
    await fetch(`${gw.url}/v1/nowhere`, { method: 'POST', headers: h, body: '{}' });
    const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
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
    expect(r.output).toContain('SVC_METRICS_PORT');
  });

  it('refuses a bad SVC_METRICS_PORT, and a metrics port already taken, with a message naming it', async () => {
    const bad = await runToExit([], { SVC_METRICS_PORT: 'nine' });
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('SVC_METRICS_PORT must be a port number');
    const taken = await runToExit([], { SVC_METRICS_PORT: new URL(gw.metricsUrl).port });
    expect(taken.code).toBe(1);
    expect(taken.output).toContain(`Cannot serve metrics on 127.0.0.1:${new URL(gw.metricsUrl).port}`);
  });

  it('fails at start on a bad manifest, naming the file, the object and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bad-'));
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: gateway.svc.dev/v1alpha1',
        'kind: Plan',
        'metadata: {name: p}',
        'spec: {tier: 1}',
        '---',
        'apiVersion: gateway.svc.dev/v1alpha1',
        'kind: ModelRoute',
        'metadata: {name: broken}',
        'spec:',
        '  pricing: {inputPerMTokUsd: -1}',
        '  targets: [{name: t, provider: mock}]',
        '',
      ].join('\n'),
    );
    const r = await runToExit([], { SVC_CONFIG: file });
    expect(r.code).toBe(1);
    expect(r.output).toContain(`${file}#2: ModelRoute/broken field spec.pricing.inputPerMTokUsd:`);
  });

  it('fails at start on a target missing what its kind needs, naming the object and the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bad-'));
    const cases: Array<[string, string, string]> = [
      ['{name: t, provider: bedrock, credentials: {ambient: {}}}', 'spec.targets[0].region', 'provider bedrock needs a region'],
      ['{name: t, provider: vertex, region: us-central1, credentials: {ambient: {}}}', 'spec.targets[0].project', 'provider vertex needs a project'],
      ['{name: t, provider: openai, credentials: {env: OPENAI_API_KEY}}', 'spec.targets[0].baseUrl', 'provider openai needs a baseUrl'],
      [
        '{name: t, provider: openai, baseUrl: "https://x.test/v1", credentials: {secretKeyRef: {name: s}}}',
        'spec.targets[0].credentials.secretKeyRef',
        'provider openai needs secretKeyRef.key',
      ],
    ];
    const runs = cases.map(([target], i) => {
      const file = join(dir, `route-${i}.yaml`);
      writeFileSync(
        file,
        [
          'apiVersion: gateway.svc.dev/v1alpha1',
          'kind: ModelRoute',
          'metadata: {name: cloud}',
          'spec:',
          '  pricing: {inputPerMTokUsd: 1, outputPerMTokUsd: 2}',
          `  targets: [${target}, {name: spare, provider: mock}]`,
          '---',
          'apiVersion: v1',
          'kind: Secret',
          'metadata: {name: s}',
          'stringData: {api-key: k}',
          '',
        ].join('\n'),
      );
      return runToExit([], { SVC_CONFIG: file });
    });
    const results = await Promise.all(runs);
    cases.forEach(([, field, message], i) => {
      const r = results[i] as { code: number | null; output: string };
      expect(r.code, r.output).toBe(1);
      expect(r.output).toContain(`ModelRoute/cloud field ${field}: target t: ${message}`);
      expect(r.output).not.toContain('listening on');
    });
  }, 180_000);

  it('fails at start on a reference to a missing object', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bad-'));
    const file = join(dir, 'ref.yaml');
    writeFileSync(file, 'apiVersion: gateway.svc.dev/v1alpha1\nkind: Account\nmetadata: {name: a}\nspec: {planRef: nope}\n');
    const r = await runToExit([], { SVC_CONFIG: file });
    expect(r.code).toBe(1);
    expect(r.output).toContain('Account/a field spec.planRef: unknown Plan nope');
  });
});
