import { describe, expect, it } from 'vitest';
import { spliceTopLevel, SPLICE_MIN_BYTES, topLevelMembers } from './raw-splice.ts';
import { openAIChatPassThrough } from './openai/openai-openai.ts';
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';

/** What serializing the parsed body with the edits gives (the reference the splice must equal). */
function reference(raw: string, edits: Map<string, unknown>): string {
  const v = { ...(JSON.parse(raw) as Record<string, unknown>) };
  for (const [k, x] of edits) v[k] = x;
  return JSON.stringify(v);
}

const BODIES = [
  '{}',
  '{"model":"m","messages":[{"role":"user","content":"hi"}]}',
  ' { "model" : "m" ,\n "n":2 , "stop":null,"x":true,"y":false,"z":-1.5e3 } ',
  '{"s":"a \\"quoted\\" {brace} [bracket] \\\\","model":"m"}',
  '{"k\\u0065y":1,"model":"\\u00e9","nested":{"model":"inner","a":[1,{"b":"}"}]}}',
  '{"a":"\\\\\\\\","model":"m","tail":"x"}',
];

describe('spliceTopLevel', () => {
  it.each(BODIES)('equals serializing the parsed body with the edits: %s', (raw) => {
    for (const edits of [
      new Map<string, unknown>(),
      new Map<string, unknown>([['model', 'upstream/m']]),
      new Map<string, unknown>([
        ['model', 'u'],
        ['max_completion_tokens', 99],
        ['stream_options', { include_usage: true }],
      ]),
      new Map<string, unknown>([
        ['n', undefined],
        ['metadata', undefined],
        ['x', undefined],
      ]),
    ]) {
      const out = spliceTopLevel(Buffer.from(raw), edits);
      expect(out).not.toBeNull();
      const text = (out as Buffer).toString();
      expect(JSON.parse(text)).toEqual(JSON.parse(reference(raw, edits)));
      // Members in the same order as JSON.stringify puts them.
      expect(Object.keys(JSON.parse(text) as object)).toEqual(Object.keys(JSON.parse(reference(raw, edits)) as object));
    }
  });

  it.each([
    ['a key given twice', '{"model":"a","model":"b"}'],
    ['an array', '[1,2]'],
    ['two objects', '{"a":1}{"b":2}'],
    ['a string left open', '{"a":"x'],
    ['an object left open', '{"a":{"b":1}'],
    ['a trailing comma', '{"a":1,}'],
  ])('declines %s (the caller serializes instead)', (_name, raw) => {
    expect(spliceTopLevel(Buffer.from(raw), new Map([['model', 'x']]))).toBeNull();
  });

  it('finds each member of a long prompt body with its raw value', () => {
    const prompt = 'word "q" \\ é '.repeat(10_000);
    const raw = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: prompt }], n: 1 }));
    const members = topLevelMembers(raw);
    expect(members?.map((m) => m.key)).toEqual(['model', 'messages', 'n']);
    const messages = members?.[1];
    expect(JSON.parse(raw.toString('utf8', (messages?.start ?? 0) + '"messages":'.length, messages?.end))).toEqual([{ role: 'user', content: prompt }]);
  });
});

describe('the chat pass-through on a large prompt', () => {
  const target = { upstreamModel: 'up-model' } as CompiledTarget;
  const model = { maxOutputTokens: 4096 } as CompiledModel;

  it('sends the same JSON as serializing the parsed body, spliced on the client bytes', () => {
    const client = { model: 'gw-model', messages: [{ role: 'user', content: 'é"x'.repeat(SPLICE_MIN_BYTES) }], max_tokens: 50, metadata: { task_type: 't' } };
    const raw = Buffer.from(JSON.stringify(client));
    const spliced = openAIChatPassThrough(client, raw).request(target, model);
    const plain = openAIChatPassThrough(client).request(target, model);
    expect(spliced.bytes).toBeInstanceOf(Buffer);
    expect(plain.bytes).toBeUndefined();
    expect(JSON.parse((spliced.bytes as Buffer).toString())).toEqual(JSON.parse(plain.body));
    expect(spliced.body).toBe(plain.body);
    expect(JSON.parse(plain.body)).toMatchObject({ model: 'up-model', max_tokens: 50 });
    expect(JSON.parse(plain.body)).not.toHaveProperty('metadata');
  });

  it('serializes a small body as before', () => {
    const client = { model: 'gw-model', messages: [{ role: 'user', content: 'hi' }] };
    const r = openAIChatPassThrough(client, Buffer.from(JSON.stringify(client))).request(target, model);
    expect(r.bytes).toBeUndefined();
    expect(r.body).toBe(JSON.stringify({ model: 'up-model', messages: client.messages, max_completion_tokens: 4096 }));
  });
});
