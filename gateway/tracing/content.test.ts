import { describe, expect, it } from 'vitest';
import { inputContent, MAX_CONTENT, outputContent } from './content.ts';

const sse = (events: Array<[string | null, object | string]>): string =>
  events.map(([e, d]) => `${e ? `event: ${e}\n` : ''}data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`).join('');

describe('prompts and completions in the GenAI conventions message schema', () => {
  it('maps an OpenAI chat request: roles, text parts, tool calls and tool results, images by type only', () => {
    const c = inputContent('openai', 'chat.completions', {
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      ],
    });
    expect(JSON.parse(c?.messages ?? '')).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'What is this?' }, { type: 'image_url' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'look', arguments: '{"x":1}' }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'a cat' }] },
    ]);
    expect(c?.system).toBeNull();
  });

  it("keeps Anthropic's system and the Responses API's instructions apart (gen_ai.system_instructions)", () => {
    const a = inputContent('anthropic', 'messages', {
      system: [{ type: 'text', text: 'Terse.' }],
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '42' }] }] }],
    });
    expect(JSON.parse(a?.system ?? '')).toEqual([{ type: 'text', content: 'Terse.' }]);
    expect(JSON.parse(a?.messages ?? '')).toEqual([{ role: 'user', parts: [{ type: 'tool_call_response', id: 't1', response: '42' }] }]);
    const r = inputContent('openai', 'responses', { instructions: 'French.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] });
    expect(JSON.parse(r?.messages ?? '')).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]);
    expect(inputContent('openai', 'embeddings', { input: 'x' })).toBeNull();
  });

  it('redacts secrets and bounds each attribute, saying when it cut', () => {
    const long = 'x'.repeat(MAX_CONTENT + 100);
    const c = inputContent('openai', 'chat.completions', {
      messages: [
        { role: 'user', content: 'key sk-proj-0123456789abcdefXYZ' },
        { role: 'user', content: long },
        { role: 'user', content: 'after the bound' },
      ],
    });
    const m = JSON.parse(c?.messages ?? '') as Array<{ parts: Array<{ content: string }> }>;
    expect(m[0]?.parts[0]?.content).toBe('key [REDACTED]');
    expect(m.reduce((n, x) => n + (x.parts[0]?.content.length ?? 0), 0)).toBe(MAX_CONTENT);
    expect(m[2]?.parts[0]?.content).toBe('');
    expect(c?.truncated).toBe(true);
  });

  it('reads the completion of a whole answer and of a stream, in each dialect', () => {
    const whole = outputContent(
      'chat.completions',
      JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }] }),
      false,
    );
    expect(JSON.parse(whole?.messages ?? '')).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Hi' }], finish_reason: 'stop' }]);
    const chunk = (delta: object, finish: string | null = null): object => ({ choices: [{ index: 0, delta, finish_reason: finish }] });
    const chat = sse([
      [null, chunk({ content: 'He' })],
      [null, chunk({ content: 'llo' })],
      [null, chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'f', arguments: '{"a"' } }] })],
      [null, chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, 'tool_calls')],
      [null, '[DONE]'],
    ]);
    expect(JSON.parse(outputContent('chat.completions', chat, true)?.messages ?? '')).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Hello' },
          { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
        ],
        finish_reason: 'tool_calls',
      },
    ]);
    const messages = sse([
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Bonjour' } }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' } }],
    ]);
    expect(JSON.parse(outputContent('messages', messages, true)?.messages ?? '')).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Bonjour' }], finish_reason: 'end_turn' },
    ]);
    const responses = sse([
      ['response.output_text.delta', { type: 'response.output_text.delta', delta: 'Ho' }],
      [
        'response.completed',
        { type: 'response.completed', response: { status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hola' }] }] } },
      ],
    ]);
    expect(JSON.parse(outputContent('responses', responses, true)?.messages ?? '')).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hola' }], finish_reason: 'completed' },
    ]);
  });
});
