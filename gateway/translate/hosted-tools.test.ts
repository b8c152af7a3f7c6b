// Hosted tools (run on OpenAI's side) sent to a target that does not speak the Responses API: dropped by default
// and named, refused when the route says reject, refused when tool_choice forces one; client-run built-ins and
// custom tools stay refused; the client's body is never changed.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/catalog.ts';
import { toChatRequest } from './responses/responses-chat-request.ts';

const fn = { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } };
const codexLike = {
  model: 'm',
  input: 'hi',
  tool_choice: 'auto',
  tools: [fn, { type: 'web_search', external_web_access: false }, { type: 'file_search', vector_store_ids: ['vs_1'] }, { type: 'web_search' }],
};

function refusal(f: () => unknown): { code: string; param: string | undefined; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof GatewayError) return { code: e.code, param: e.param, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('hosted tools on a translated upstream', () => {
  it('drops them by default, names each once in order, keeps the function tools, leaves the body unchanged', () => {
    const before = structuredClone(codexLike);
    const r = toChatRequest(codexLike, 'up');
    expect(r.dropped).toEqual(['web_search', 'file_search']);
    expect(r.body.tools).toEqual([{ type: 'function', function: { name: 'exec_command', parameters: fn.parameters } }]);
    expect(r.body.tool_choice).toBe('auto');
    expect(codexLike).toEqual(before);
  });

  it('sends no tools at all when every tool was hosted', () => {
    const r = toChatRequest(
      { model: 'm', input: 'hi', tools: [{ type: 'web_search_preview' }, { type: 'code_interpreter', container: { type: 'auto' } }] },
      'up',
    );
    expect(r.dropped).toEqual(['web_search_preview', 'code_interpreter']);
    expect(r.body.tools).toBeUndefined();
  });

  it('refuses them on a route with hostedTools: reject, naming the tool', () => {
    expect(refusal(() => toChatRequest(codexLike, 'up', 'reject'))).toMatchObject({ code: 'unsupported_content', param: 'tools[1]' });
    expect(refusal(() => toChatRequest(codexLike, 'up', 'reject')).message).toContain('the web_search tool has no equivalent');
  });

  it.each([{ type: 'web_search' }, { type: 'mcp', server_label: 'deepwiki' }, { type: 'image_generation' }])(
    'refuses a tool_choice that forces a hosted tool (%o), whatever the setting',
    (choice) => {
      const body = { model: 'm', input: 'hi', tools: [{ type: choice.type, server_label: 'x' }], tool_choice: choice };
      for (const mode of ['drop', 'reject'] as const) {
        expect(refusal(() => toChatRequest(body, 'up', mode))).toMatchObject({ code: 'unsupported_content', param: 'tool_choice' });
      }
    },
  );

  it.each(['computer_use_preview', 'local_shell', 'custom'])('still refuses the client-run %s tool (the client expects calls to it)', (type) => {
    expect(refusal(() => toChatRequest({ model: 'm', input: 'hi', tools: [{ type, name: 'x' }] }, 'up'))).toMatchObject({ param: 'tools[0]' });
  });
});
