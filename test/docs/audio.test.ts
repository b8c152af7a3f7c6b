// The audio examples of docs/api.md, run as a newcomer would: the curl calls as written, from the repository's root
// (speech in a scratch directory, where it writes its file), against `npm start`'s demo config (mock-whisper,
// mock-tts) with the demo-builder key the process printed.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
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
  gw = await startGatewayProcess({});
  port = new URL(gw.url).port;
  env = { ...process.env, SVC_KEY: gw.keys['demo-builder'] };
  dir = await mkdtemp(join(tmpdir(), 'svc-audio-docs-'));
});

afterAll(async () => {
  await gw?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function run(example: string, cwd: string): string {
  const script = example.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
  return execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env, cwd, encoding: 'utf8' });
}

async function spend(): Promise<number> {
  const r = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${gw.keys['demo-builder']}` } });
  return Math.round(((await r.json()) as { month_spend_usd: number }).month_spend_usd * 1e9);
}

describe('docs/api.md: audio on the demo', () => {
  it('transcribes the bundled clip (mock-whisper, verbose_json), billed one second', async () => {
    const before = await spend();
    const body = JSON.parse(run(docExample('docs/api.md', 'audio-transcription'), ROOT)) as { text: string; duration: number; segments: unknown[] };
    expect(body.text).toBe('Hello from the svc-gateway demo.');
    expect(body.duration).toBe(1);
    expect(body.segments).toHaveLength(1);
    // 0.00624 USD a minute: 104,000 nano-USD a second.
    expect((await spend()) - before).toBe(104_000);
  });

  it('writes speech to a file (mock-tts, wav), billed per character', async () => {
    const before = await spend();
    run(docExample('docs/api.md', 'audio-speech'), dir);
    const wav = await readFile(join(dir, 'speech.wav'));
    expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
    expect(wav.toString('latin1', 8, 12)).toBe('WAVE');
    expect(wav.length).toBeGreaterThan(1000);
    // 15.6 USD per million characters: 15,600 nano-USD each, 23 characters.
    expect((await spend()) - before).toBe(23 * 15_600);
  });
});
