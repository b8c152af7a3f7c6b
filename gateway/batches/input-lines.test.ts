// The batch input file's checks, line by line, and the batch price: table-driven.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/catalog.ts';
import { readInputFile } from './input-lines.ts';
import { batchCost } from './plan.ts';

const chat = (id: string, extra: object = {}): string =>
  JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra } });

describe('readInputFile', () => {
  it('reads the lines, their custom_ids, and each line demand as the per-call route would', () => {
    const text = `${chat('a', { max_tokens: 7, n: 2 })}\r\n\n${chat('b')}\n`;
    const f = readInputFile(text);
    expect(f.url).toBe('/v1/chat/completions');
    expect(f.model).toBe('m');
    expect(f.lines.map((l) => l.customId)).toEqual(['a', 'b']);
    expect(f.lines[0]?.demand).toMatchObject({ maxTokens: 7, choices: 2, inputBytes: Buffer.byteLength(chat('a', { max_tokens: 7, n: 2 })) });
    expect(f.lines[1]?.demand.maxTokens).toBeUndefined();
  });

  const cases: Array<[string, string, string]> = [
    ['not JSON', `${chat('a')}\n{oops`, 'line 2: not valid JSON'],
    ['an array', '[1]', 'line 1: not a JSON object'],
    ['a duplicate custom_id', `${chat('a')}\n${chat('a')}`, 'line 2: custom_id "a" is used by an earlier line'],
    ['no custom_id', JSON.stringify({ method: 'POST', url: '/v1/embeddings', body: {} }), 'line 1: custom_id must be'],
    ['GET', JSON.stringify({ custom_id: 'a', method: 'GET', url: '/v1/embeddings', body: {} }), 'line 1: method must be "POST"'],
    ['another url', JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/audio/speech', body: {} }), 'line 1: url must be one of'],
    ['a stream', chat('a', { stream: true }), 'line 1: a batch request cannot stream'],
    [
      'a body the endpoint refuses',
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm' } }),
      'line 1: body: messages',
    ],
    [
      'two models',
      `${chat('a')}\n${JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/chat/completions', body: { model: 'other', messages: [{ role: 'user', content: 'x' }] } })}`,
      'line 2: every line of a file uses one model',
    ],
    [
      'two endpoints',
      `${chat('a')}\n${JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/embeddings', body: { model: 'm', input: 'x' } })}`,
      'line 2: every line of a file calls one endpoint',
    ],
    ['no lines', '\n\n', 'it has no requests'],
  ];
  it.each(cases)('refuses %s with a 400 naming the line', (_name, text, message) => {
    let err: unknown;
    try {
      readInputFile(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
    expect((err as GatewayError).message).toContain(message);
  });
});

describe('batchCost', () => {
  const price = { inputNanoPerToken: 1040, outputNanoPerToken: 2080, batchPpm: 500_000 };
  it.each([
    [0, 0, 0],
    [1, 0, 520],
    [3, 1, Math.floor((3 * 1040 + 2080) / 2)],
    [1, 1, 1560],
  ])('%i input and %i output tokens cost %i nano-USD at half price', (input, output, cost) => {
    expect(batchCost(price, input, output)).toBe(cost);
  });
  it('rounds down and stays exact at large counts', () => {
    expect(batchCost({ inputNanoPerToken: 3, outputNanoPerToken: 0, batchPpm: 333_333 }, 1, 0)).toBe(0);
    expect(batchCost(price, 2 ** 40, 0)).toBe((2 ** 40 * 1040) / 2);
  });
});
