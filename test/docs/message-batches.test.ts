// The Anthropic Message Batches example of docs/api.md, run as a newcomer would: the shell script as written (curl,
// jq), against `npm start`'s demo config, with the demo-builder key the process printed. The mock ends the batch in
// seconds; the results are Anthropic's JSONL as @anthropic-ai/sdk's results() decodes it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let gw: GatewayProcess;
let dir: string;

beforeAll(async () => {
  gw = await startGatewayProcess({});
  dir = mkdtempSync(join(tmpdir(), 'svc-message-batches-doc-'));
});

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('docs/api.md: Anthropic Message Batches on the demo', () => {
  it('creates a batch, polls it until it ended and reads its results', () => {
    const port = new URL(gw.url).port;
    const script = docExample('docs/api.md', 'message-batches')
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
      .replace(/^export SVC_KEY=.*$/m, '');
    const out = execFileSync('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      env: { ...process.env, SVC_KEY: gw.keys['demo-builder'] },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const rows = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { custom_id: string; result: { type: string; message: { type: string; model: string; content: Array<{ type: string }> } } });
    expect(rows.map((r) => r.custom_id).sort()).toEqual(['r1', 'r2']);
    for (const r of rows) {
      expect(r.result.type).toBe('succeeded');
      expect(r.result.message).toMatchObject({ type: 'message', model: 'mock-mini' });
      expect(r.result.message.content[0]?.type).toBe('text');
    }
  }, 90_000);
});
