import { describe, expect, it } from 'vitest';
import { rewriteModel, usageOf } from './json-splice.ts';

describe('rewriteModel: the top-level model of a serialized answer', () => {
  const chunk = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-2024-08-06","choices":[{"delta":{"content":"\\"model\\":\\"x\\""}}]}';

  it('replaces the compact form and nothing else', () => {
    const out = rewriteModel(chunk, 'smart');
    expect(JSON.parse(out)).toEqual({ ...JSON.parse(chunk), model: 'smart' });
  });

  it('returns the same string when it already names the model', () => {
    const same = rewriteModel(chunk, 'gpt-4o-2024-08-06');
    expect(same).toBe(chunk);
  });

  it('handles spaced and escaped layouts like a parser would', () => {
    const spaced = '{"id": "c1", "model" : "up\\u002dstream", "choices": []}';
    expect(JSON.parse(rewriteModel(spaced, 'smart'))).toEqual({ id: 'c1', model: 'smart', choices: [] });
    const escaped = '{"id":"c1","model":"a\\"b","choices":[]}';
    expect(JSON.parse(rewriteModel(escaped, 'smart'))).toEqual({ id: 'c1', model: 'smart', choices: [] });
  });

  it('JSON-encodes the new name', () => {
    expect(JSON.parse(rewriteModel('{"id":"c1","model":"m"}', 'we"ird')).model).toBe('we"ird');
  });

  it('skips a nested "model" that comes before the top-level one (an Anthropic tool input, say)', () => {
    const body = '{"content":[{"type":"tool_use","input":{"model":"x"}}],"model":"claude-up","usage":{"input_tokens":1}}';
    expect(JSON.parse(rewriteModel(body, 'smart'))).toEqual({ ...JSON.parse(body), model: 'smart' });
  });

  it('leaves an object without a model unchanged', () => {
    expect(rewriteModel('{"id":"c1","choices":[]}', 'smart')).toBe('{"id":"c1","choices":[]}');
  });
});

describe('usageOf: usage read without parsing the whole answer', () => {
  it('reads the last top-level usage object', () => {
    const body = JSON.stringify({
      id: 'c',
      choices: [{ message: { content: '"usage":{"prompt_tokens":999}' } }],
      usage: { prompt_tokens: 12, completion_tokens: 7 },
    });
    expect(usageOf(body)).toEqual({ prompt_tokens: 12, completion_tokens: 7 });
  });

  it('is undefined for usage null or absent', () => {
    expect(usageOf('{"id":"c","usage":null}')).toBeUndefined();
    expect(usageOf('{"id":"c"}')).toBeUndefined();
  });
});
