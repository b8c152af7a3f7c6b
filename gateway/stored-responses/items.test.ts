import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/catalog.ts';
import { itemsPage, mintedAt, mintId, normalizeInput, rebuiltInput, resolveReferences } from './items.ts';
import type { StoredResponse } from './types.ts';

const turn = (id: string, input: StoredResponse['input'], output: unknown[], previousId: string | null = null): StoredResponse => ({
  id,
  account: 'a',
  previousId,
  createdAt: 0,
  expiresAt: 1,
  input,
  response: { id, output },
});

describe('normalizeInput', () => {
  it.each([
    ['a string: one user message', 'Hi', [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }], status: 'completed' }]],
    [
      'an assistant message with string content: output_text',
      [{ role: 'assistant', content: 'Yo' }],
      [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Yo', annotations: [] }], status: 'completed' }],
    ],
    [
      'a function call output keeps its fields',
      [{ type: 'function_call_output', call_id: 'c1', output: '21C' }],
      [{ type: 'function_call_output', call_id: 'c1', output: '21C', status: 'completed' }],
    ],
  ])('%s, each with an id', (_name, input, want) => {
    const got = normalizeInput(input);
    expect(got.map(({ id: _id, ...rest }) => rest)).toEqual(want);
    for (const item of got) expect(item.id).toMatch(/^[a-z]+_svc[0-9a-f]{40}$/);
  });

  it('keeps an id the client gave', () => {
    expect(normalizeInput([{ id: 'msg_own', role: 'user', content: 'x' }])[0]?.id).toBe('msg_own');
  });
});

describe('rebuiltInput', () => {
  const one = turn('r1', normalizeInput('first'), [{ id: 'msg_up', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }]);
  const two = turn(
    'r2',
    normalizeInput([{ role: 'user', content: 'second' }]),
    [{ id: 'fc_1', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }],
    'r1',
  );

  it('is the chain inputs and outputs, oldest first, then the new input; ids the gateway gave are not sent', () => {
    const got = rebuiltInput([one, two], 'third');
    expect(got.map((x) => (x.id as string | undefined) ?? null)).toEqual([null, 'msg_up', null, 'fc_1', null]);
    expect(JSON.stringify(got)).toMatch(/first.*ok.*second.*"f".*third/);
  });

  it('resolves an item_reference from the chain, and refuses one that is not there', () => {
    const ref = one.input[0]?.id as string;
    expect(resolveReferences([{ type: 'item_reference', id: ref }], [...one.input])).toEqual([one.input[0]]);
    expect(() => rebuiltInput([one], [{ type: 'item_reference', id: 'msg_elsewhere' }])).toThrow(GatewayError);
  });
});

describe('itemsPage', () => {
  const items = ['a', 'b', 'c', 'd'].map((id) => ({ id }));
  it.each([
    [{ order: 'desc' as const, limit: 20 }, ['d', 'c', 'b', 'a'], false],
    [{ order: 'asc' as const, limit: 2 }, ['a', 'b'], true],
    [{ order: 'asc' as const, limit: 2, after: 'b' }, ['c', 'd'], false],
    [{ order: 'desc' as const, limit: 1, after: 'c' }, ['b'], true],
  ])('%j', (q, ids, more) => {
    const page = itemsPage(items, q) as { data: Array<{ id: string }>; has_more: boolean; first_id: string; last_id: string };
    expect(page.data.map((x) => x.id)).toEqual(ids);
    expect(page.has_more).toBe(more);
    expect([page.first_id, page.last_id]).toEqual([ids[0], ids.at(-1)]);
  });

  it('refuses an unknown after', () => {
    expect(() => itemsPage(items, { order: 'asc', limit: 2, after: 'zz' })).toThrow(GatewayError);
  });
});

describe('mintId', () => {
  it('carries its minting time; other ids carry none', () => {
    const id = mintId('resp', 1_800_000_000_123);
    expect(id).toMatch(/^resp_svc[0-9a-f]{40}$/);
    expect(mintedAt(id)).toBe(1_800_000_000_123);
    expect(mintId('resp')).not.toBe(mintId('resp'));
    expect(mintedAt('resp_67cb71b351908190a308f3859487620d06981a8637e6bc44')).toBeNull();
  });
});
