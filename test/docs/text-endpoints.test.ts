// The text completions, rerank and moderations examples of docs/api.md, run as a newcomer would: the curl calls as
// written, against `npm start`'s demo config (its mock models), with the demo-builder key the process printed.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

let gw: GatewayProcess;
let env: NodeJS.ProcessEnv;
let port: string;

beforeAll(async () => {
  gw = await startGatewayProcess({});
  port = new URL(gw.url).port;
  env = { ...process.env, SVC_KEY: gw.keys['demo-builder'] };
});

afterAll(async () => {
  await gw?.stop();
});

function run(example: string): unknown {
  const script = example.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`).replace(/^export SVC_KEY=.*$/m, '');
  return JSON.parse(execFileSync('bash', ['-euo', 'pipefail', '-c', script], { env, encoding: 'utf8' })) as unknown;
}

describe('docs/api.md: text completions, rerank and moderations on the demo', () => {
  it('completes in the middle (mock-code, a suffix)', () => {
    const body = run(docExample('docs/api.md', 'completions-fim')) as {
      object: string;
      model: string;
      choices: Array<{ text: string }>;
      usage: { completion_tokens: number };
    };
    expect(body.object).toBe('text_completion');
    expect(body.model).toBe('mock-code');
    expect(body.choices[0]?.text).toContain('mock fill between "return" and "print(add(1, 2))"');
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('reranks (mock-rerank): the matching document first', () => {
    const body = run(docExample('docs/api.md', 'rerank')) as {
      model: string;
      results: Array<{ index: number }>;
      meta: { billed_units: { search_units: number } };
    };
    expect(body.model).toBe('mock-rerank');
    expect(body.results).toHaveLength(1);
    expect(body.results[0]?.index).toBe(1);
    expect(body.meta.billed_units.search_units).toBe(1);
  });

  it("refuses an empty query on the Cohere path in Cohere's shape", () => {
    expect(run(docExample('docs/api.md', 'rerank-cohere-error'))).toEqual({ message: 'invalid request: query: must not be empty' });
  });

  it('moderates text and an image with the default model', () => {
    const body = run(docExample('docs/api.md', 'moderations')) as {
      model: string;
      results: Array<{ flagged: boolean; category_applied_input_types: Record<string, string[]> }>;
    };
    expect(body.model).toBe('omni-moderation-latest');
    expect(body.results[0]?.flagged).toBe(true);
    expect(body.results[0]?.category_applied_input_types.violence).toEqual(['text', 'image']);
  });
});
