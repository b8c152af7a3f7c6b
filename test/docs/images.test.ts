// The images examples of docs/api.md, run as a newcomer would: the curl calls as written, in an empty directory,
// against `npm start`'s demo config (its mock-image model), with the demo-builder key the process printed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { expectConforms } from '../helpers/openapi.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let gw: GatewayProcess;
let env: NodeJS.ProcessEnv;
let port: string;
let dir: string;

beforeAll(async () => {
  gw = await startGatewayProcess({});
  port = new URL(gw.url).port;
  env = { ...process.env, SVC_KEY: gw.keys['demo-builder'] };
  dir = mkdtempSync(join(tmpdir(), 'svc-images-doc-'));
});

afterAll(async () => {
  await gw?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(example: string): unknown {
  const script = example.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`).replace(/^export SVC_KEY=.*$/m, '');
  return JSON.parse(execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env, encoding: 'utf8', cwd: dir })) as unknown;
}

describe('docs/api.md: images on the demo', () => {
  it('generates a PNG (mock-image) and saves it', () => {
    const body = run(docExample('docs/api.md', 'images-generate'));
    expectConforms('ImagesResponse', body);
    const png = readFileSync(join(dir, 'lighthouse.png'));
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  });

  it('edits the saved PNG with a mask', () => {
    const body = run(docExample('docs/api.md', 'images-edit')) as { data: Array<{ b64_json: string }> };
    expectConforms('ImagesResponse', body);
    expect(body.data).toHaveLength(1);
  });
});
