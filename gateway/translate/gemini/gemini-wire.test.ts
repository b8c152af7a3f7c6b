// The Gemini pieces every dialect shares: call ids that carry Gemini's id through a client and back, usage read defensively, Google's error bodies, and the selection of the translators for protocol gemini.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/catalog.ts';
import { SseParser } from '../../sse/parser.ts';
import { anthropicFromGemini } from '../anthropic/anthropic-gemini.ts';
import { callNonce, encodeCallId, geminiIdOf } from './gemini-ids.ts';
import { fromGeminiUsage, geminiErrorMessage } from './gemini-usage.ts';
import { openAIFromGemini } from '../openai/openai-gemini.ts';
import { responsesFromGemini } from '../responses/responses-gemini.ts';
import { chatTranslation, countTokensTranslation, embeddingsTranslation, messagesTranslation, responsesTranslation } from '../select.ts';
import { MODEL, TARGET } from '../testdata/golden.ts';

const GEMINI = { ...TARGET, provider: 'gemini' as const, upstreamModel: 'gemini-3-pro-preview' };

describe('call ids', () => {
  it('carry a short Gemini id, else name the call by the answer and its place; always within 40 characters of [A-Za-z0-9_-]', () => {
    expect(encodeCallId('abc', 0)).toBe('call_abc0');
    expect(encodeCallId('abc', 1, 'fc-1_x')).toBe('call_g_fc-1_x');
    expect(geminiIdOf('call_g_fc-1_x')).toBe('fc-1_x');
    for (const id of ['x'.repeat(34), 'has space', '', 7]) expect(encodeCallId('abc', 2, id)).toBe('call_abc2');
    const long = encodeCallId(callNonce('A'.repeat(60)), 123, 'y'.repeat(33));
    expect(long.length).toBeLessThanOrEqual(40);
    expect(encodeCallId(callNonce('Zk-Q9/aB+cD='.repeat(5)), 999)).toMatch(/^call_[A-Za-z0-9]{1,24}999$/);
  });

  it.each(['call_abc0', 'toolu_01A', 'call_gx', 'call_g_', 'call_g_a b', ''])('a foreign id (%s) carries no Gemini id', (id) => {
    expect(geminiIdOf(id)).toBeUndefined();
  });

  it('a call answered to an OpenAI client comes back on the next turn with the placeholder signature Gemini 3 needs', () => {
    const answer = {
      candidates: [
        { content: { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'Cq0CAdHtim+/9x==' }] }, finishReason: 'STOP' },
      ],
      responseId: 'r-1',
    };
    const completion = JSON.parse(openAIFromGemini({}).response(JSON.stringify(answer), 'm').body) as {
      choices: Array<{ message: { tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> } }>;
    };
    const call = completion.choices[0]!.message.tool_calls[0]!;
    expect(call.id).toBe('call_r10');
    const next = {
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: call.function }] },
        { role: 'tool', tool_call_id: call.id, content: 'ok' },
      ],
    };
    const body = JSON.parse(openAIFromGemini(next).request(GEMINI, MODEL).body) as { contents: unknown[] };
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'go' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'skip_thought_signature_validator' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'ok' } } }] },
    ]);
  });

  it('a call with a Gemini id answered to an Anthropic client returns that id on the call and its response', () => {
    const answer = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'fc-9', name: 'f', args: {} } }] }, finishReason: 'STOP' }] };
    const message = JSON.parse(anthropicFromGemini({}).response(JSON.stringify(answer), 'm').body) as { content: Array<{ id: string }> };
    const id = message.content[0]!.id;
    const next = {
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id, name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] },
      ],
    };
    const body = JSON.parse(anthropicFromGemini(next).request(GEMINI, MODEL).body) as { contents: Array<{ parts: unknown[] }> };
    expect(body.contents[1]!.parts).toEqual([{ functionCall: { name: 'f', args: {}, id: 'fc-9' }, thoughtSignature: 'skip_thought_signature_validator' }]);
    expect(body.contents[2]!.parts).toEqual([{ functionResponse: { id: 'fc-9', name: 'f', response: { output: 'ok' } } }]);
  });
});

describe('usage', () => {
  const BAD: unknown[] = [null, -5, '12', 0.5, Infinity, Number.NaN, {}, true];
  it.each(BAD)('a count that is not a whole non-negative number (%s) is flagged missing, never read as 0', (v) => {
    expect(fromGeminiUsage({ promptTokenCount: v, candidatesTokenCount: v })).toMatchObject({
      inputTokens: 0,
      outputTokens: 0,
      inputMissing: true,
      outputMissing: true,
    });
  });

  it('input counts the tool-use prompt, output the thoughts; an absent candidates count is read from the total', () => {
    expect(
      fromGeminiUsage({ promptTokenCount: 100, toolUsePromptTokenCount: 7, candidatesTokenCount: 20, thoughtsTokenCount: 30, cachedContentTokenCount: 64 }),
    ).toEqual({
      inputTokens: 107,
      outputTokens: 50,
      cacheReadTokens: 64,
      cacheWriteTokens: 0,
      reasoningTokens: 30,
    });
    expect(fromGeminiUsage({ promptTokenCount: 10, thoughtsTokenCount: 5, totalTokenCount: 15 })).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 5,
    });
    expect(fromGeminiUsage({ promptTokenCount: 10 })).toMatchObject({ inputTokens: 10, outputMissing: true });
    expect(fromGeminiUsage(undefined)).toMatchObject({ inputMissing: true, outputMissing: true });
  });
});

describe('streams as Google frames them', () => {
  it('data lines separated by CRLF, parsed by the gateway SSE parser, end complete in every dialect', () => {
    const chunks = [
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] } }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 },
        responseId: 'x',
      },
      {
        candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
        responseId: 'x',
      },
    ];
    const wireText = chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
    for (const t of [openAIFromGemini({ stream: true }), anthropicFromGemini({ stream: true }), responsesFromGemini({ input: 'hi', stream: true })]) {
      const tr = t.stream('m');
      const parser = new SseParser();
      // Split mid-line, as TCP reads may.
      const out = [...parser.push(wireText.slice(0, 50)), ...parser.push(wireText.slice(50))].map((e) => tr.event(e)).join('');
      expect(tr.complete && !tr.failed).toBe(true);
      expect(out).toContain('lo');
      expect(tr.usage()).toEqual({ inputTokens: 3, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 });
    }
  });
});

describe('error bodies', () => {
  it("reads Google's error JSON, also as a list, and nothing else", () => {
    const e = { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } };
    expect(geminiErrorMessage(JSON.stringify(e), 429)).toBe('upstream answered 429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).');
    expect(geminiErrorMessage(JSON.stringify([e]), 429)).toBe('upstream answered 429 RESOURCE_EXHAUSTED: Resource has been exhausted (e.g. check quota).');
    expect(geminiErrorMessage('<html>bad gateway</html>', 502)).toBe('upstream answered 502');
    expect(geminiErrorMessage(JSON.stringify({ error: { message: 'x'.repeat(900) } }), 400)).toHaveLength('upstream answered 400: '.length + 500);
  });
});

describe('select', () => {
  it('serves chat, responses, messages and embeddings on gemini with the Gemini translators, count_tokens with Gemini countTokens', () => {
    expect(chatTranslation({ messages: [] })('gemini').protocol).toBe('gemini');
    expect(responsesTranslation({ input: 'x' })('gemini').protocol).toBe('gemini');
    expect(messagesTranslation({ messages: [] }, {})('gemini').protocol).toBe('gemini');
    expect(embeddingsTranslation({ input: 'ping' })('gemini').request(GEMINI, MODEL).operation).toBe('embeddings');
    const count = countTokensTranslation({ messages: [{ role: 'user', content: 'Hello there' }] }, {})('gemini').request(GEMINI, MODEL);
    expect(count.operation).toBe('count_tokens');
    expect(count.local).toBeUndefined();
  });

  it('the availability probe (max_tokens 1) asks Gemini for one token', () => {
    const req = chatTranslation({ model: 'public-model', messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 })('gemini').request(GEMINI, MODEL);
    expect(JSON.parse(req.body)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'ping' }] }], generationConfig: { maxOutputTokens: 1 } });
  });

  it('a refusal happens before any upstream call, as a 400 in the client dialect', () => {
    for (const t of [
      () => openAIFromGemini({ n: 3, messages: [] }).request(GEMINI, MODEL),
      () => responsesFromGemini({ input: [{ type: 'function_call_output', call_id: 'x', output: '' }] }).request(GEMINI, MODEL),
      () => anthropicFromGemini({ max_tokens: 1, mcp_servers: [{}], messages: [] }).request(GEMINI, MODEL),
    ]) {
      expect(t).toThrow(GatewayError);
      try {
        t();
      } catch (e) {
        expect((e as GatewayError).status).toBe(400);
      }
    }
  });
});
