import { describe, expect, it } from 'vitest';
import type { CompiledModel } from '../contract/snapshot.ts';
import { MAX_AMOUNT } from '../state/store.ts';
import { chargedUsage } from './bound-usage.ts';
import { choicesOf, costBound, reserve, type Demand } from './estimate.ts';
import { FILE_TOKENS, IMAGE_TOKENS, nonTextTokens, TOOLS_TOKENS, toolsTokens } from './non-text.ts';

function model(over: Partial<CompiledModel> = {}): CompiledModel {
  return { id: 'm', type: 'chat', minTier: 0, inputNanoPerToken: 1000, outputNanoPerToken: 2000, maxOutputTokens: 4096, targets: [], fallbacks: [], ...over };
}
const demand = (over: Partial<Demand> = {}): Demand => ({ inputBytes: 100, extraInputTokens: 0, maxTokens: 10, choices: 1, ...over });

describe('reserve: the hold is the worst case of the call', () => {
  it.each<[string, Partial<Demand>, { inputTokens: number; outputTokens: number; holdNano: number }]>([
    ['an empty call reserves nothing', { inputBytes: 0, maxTokens: 0 }, { inputTokens: 0, outputTokens: 0, holdNano: 0 }],
    ['one byte and one token', { inputBytes: 1, maxTokens: 1 }, { inputTokens: 1, outputTokens: 1, holdNano: 3000 }],
    ['the cap times n', { maxTokens: 1000, choices: 16 }, { inputTokens: 100, outputTokens: 16_000, holdNano: 100_000 + 32_000_000 }],
    ['no cap: the model cap', { maxTokens: undefined }, { inputTokens: 100, outputTokens: 4096, holdNano: 100_000 + 4096 * 2000 }],
    [
      'images on top of the bytes',
      { extraInputTokens: 40 * IMAGE_TOKENS },
      { inputTokens: 100 + 40 * IMAGE_TOKENS, outputTokens: 10, holdNano: (100 + 40 * IMAGE_TOKENS) * 1000 + 20_000 },
    ],
  ])('%s', (_name, d, expected) => {
    expect(reserve([model()], demand(d))).toMatchObject(expected);
  });

  it('stays exact at the largest values: a 2^53 cap times n, and prices, are bounded by MAX_AMOUNT', () => {
    const r = reserve([model()], demand({ maxTokens: MAX_AMOUNT, choices: 128 }));
    expect(r.holdNano).toBe(MAX_AMOUNT);
    expect(r.inputTokens + r.outputTokens).toBe(MAX_AMOUNT);
    expect(Number.isSafeInteger(r.outputTokens)).toBe(true);
    expect(costBound(model({ inputNanoPerToken: MAX_AMOUNT }), demand({ inputBytes: MAX_AMOUNT }))).toBe(MAX_AMOUNT);
  });

  it('takes the dearest model of the chain; embeddings have no output', () => {
    const cheap = model({ id: 'c', maxOutputTokens: 8000, outputNanoPerToken: 1 });
    const dear = model({ id: 'd', maxOutputTokens: 100, outputNanoPerToken: 10_000 });
    expect(reserve([cheap, dear], demand({ maxTokens: undefined }))).toMatchObject({ outputTokens: 8000, holdNano: 100_000 + 100 * 10_000 });
    expect(reserve([model({ type: 'embeddings' })], demand({ choices: 5 }))).toMatchObject({ outputTokens: 0, holdNano: 100_000 });
  });

  it('reads n as an upstream would: numbers and numeric strings above 1, else 1', () => {
    expect([
      choicesOf(undefined),
      choicesOf(null),
      choicesOf(0),
      choicesOf(-3),
      choicesOf(1),
      choicesOf(16),
      choicesOf('16'),
      choicesOf(2.5),
      choicesOf('x'),
    ]).toEqual([1, 1, 1, 1, 1, 16, 16, 3, 1]);
    expect(choicesOf(1e300)).toBe(MAX_AMOUNT);
  });
});

describe('nonTextTokens: parts whose bytes do not bound their tokens', () => {
  it('counts images and files in every dialect, nested ones too, and nothing else', () => {
    const chat = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x' },
          { type: 'image_url', image_url: { url: 'https://a/b.png' } },
          { type: 'file', file: { file_id: 'f' } },
        ],
      },
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
    ];
    expect(nonTextTokens(chat)).toBe(IMAGE_TOKENS + FILE_TOKENS);
    const responses = [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_image', image_url: 'https://a' },
          { type: 'input_file', file_id: 'f' },
        ],
      },
    ];
    expect(nonTextTokens(responses)).toBe(IMAGE_TOKENS + FILE_TOKENS);
    const anthropic = [
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'url', url: 'https://a' } }] }] },
      { role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://a.pdf' } }] },
    ];
    expect(nonTextTokens(anthropic, 'a system prompt')).toBe(IMAGE_TOKENS + FILE_TOKENS);
    expect(nonTextTokens('hi', undefined, null, [])).toBe(0);
  });

  it("adds the upstream's tool-use prompt once when tools are declared", () => {
    expect([toolsTokens(undefined), toolsTokens([]), toolsTokens([{ name: 'a' }]), toolsTokens([{ name: 'a' }, { name: 'b' }])]).toEqual([
      0,
      0,
      TOOLS_TOKENS,
      TOOLS_TOKENS,
    ]);
  });
});

describe('chargedUsage: what a call is charged, from what its upstream reported', () => {
  const bounds = { input: 100, output: 50 };
  const est = { input: 25, output: 9 };
  const u = (inputTokens: number, outputTokens: number, more: object = {}) => ({ inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, ...more });

  it.each<[string, ReturnType<typeof u>, { input: number; output: number; estimated: boolean; clamped: string[] }]>([
    ['within the bounds: as reported', u(1, 1), { input: 1, output: 1, estimated: false, clamped: [] }],
    ['exactly the bounds', u(100, 50), { input: 100, output: 50, estimated: false, clamped: [] }],
    ['one above each bound: clamped', u(101, 51), { input: 100, output: 50, estimated: false, clamped: ['input', 'output'] }],
    ['1e15: clamped', u(1e15, 1e15), { input: 100, output: 50, estimated: false, clamped: ['input', 'output'] }],
    ['nothing reported: estimated', u(0, 0), { input: 25, output: 9, estimated: true, clamped: [] }],
    ['output missing: that count estimated', u(7, 0, { outputMissing: true }), { input: 7, output: 9, estimated: true, clamped: [] }],
    ['input missing: that count estimated', u(0, 4, { inputMissing: true }), { input: 25, output: 4, estimated: true, clamped: [] }],
  ])('%s', (_name, reported, e) => {
    const c = chargedUsage(reported, bounds, est);
    expect({ input: c.usage.inputTokens, output: c.usage.outputTokens, estimated: c.estimated, clamped: c.clamped }).toEqual(e);
  });

  it('keeps an estimate within the bounds, and a call that served nothing as reported', () => {
    expect(chargedUsage(u(0, 0), bounds, { input: 1e9, output: 1e9 }).usage).toMatchObject({ inputTokens: 100, outputTokens: 50 });
    expect(chargedUsage(u(0, 0), { input: 0, output: 0 }, est)).toMatchObject({ estimated: false, clamped: [] });
    expect(chargedUsage(u(0, 0), bounds, null)).toMatchObject({ usage: { inputTokens: 0, outputTokens: 0 }, estimated: false });
  });

  it('keeps cache tokens within the input charged', () => {
    expect(chargedUsage(u(1e6, 1, { cacheReadTokens: 900, cacheWriteTokens: 900 }), bounds, null).usage).toEqual(
      u(100, 1, { cacheReadTokens: 100, cacheWriteTokens: 0 }),
    );
  });
});
