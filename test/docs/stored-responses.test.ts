// The stored-responses example of docs/api.md, run as a newcomer would: the shell block as written (curl and jq),
// against `npm start`'s demo config (the mock), with the demo-builder key the process printed.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let gw: GatewayProcess;

beforeAll(async () => {
  gw = await startGatewayProcess({});
});

afterAll(async () => {
  await gw?.stop();
});

describe('docs/api.md: stored responses on the demo', () => {
  it('stores, reads back, continues, lists the input items, counts tokens and deletes', () => {
    const port = new URL(gw.url).port;
    const script = docExample('docs/api.md', 'stored-responses')
      .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)
      .replace(/^export SVC_KEY=.*$/m, '');
    let out: string;
    try {
      out = execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env: { ...process.env, SVC_KEY: gw.keys['demo-builder'] }, encoding: 'utf8' });
    } catch (err) {
      throw new Error(`the example failed (it needs curl and jq: apt-get install curl jq): ${String(err)}`, { cause: err });
    }
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(6);
    const [read, next, items, count, del1, del2] = lines as [
      { id: string; status: string; store: boolean; output_text: string },
      { previous_response_id: string; input_tokens: number },
      unknown,
      { object: string; input_tokens: number },
      { deleted: boolean; object: string },
      { deleted: boolean; id: string },
    ];
    expect(read).toMatchObject({ status: 'completed', store: true });
    expect(read.id).toMatch(/^resp_svc/);
    expect(read.output_text).toContain('My name is Ada.');
    expect(next.previous_response_id).toBe(read.id);
    expect(items).toEqual([
      { role: 'user', text: 'My name is Ada.' },
      { role: 'assistant', text: read.output_text },
      { role: 'user', text: 'What is my name?' },
    ]);
    expect(count.object).toBe('response.input_tokens');
    expect(count.input_tokens).toBeGreaterThan(next.input_tokens / 2);
    expect(del1).toMatchObject({ object: 'response', deleted: true });
    expect(del2).toMatchObject({ id: read.id, deleted: true });
  });
});
