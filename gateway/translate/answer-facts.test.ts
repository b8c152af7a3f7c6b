import { describe, expect, it } from 'vitest';
import { completionFacts, Facts, messageFacts, responseFacts, scanFacts } from './answer-facts.ts';

describe("an answer's id and finish reasons", () => {
  it('are read from a whole pass-through answer without parsing it: the top-level id, every choice reason', () => {
    const chat = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'a "finish_reason":"fake" in text', tool_calls: [{ id: 'call_9', type: 'function' }] },
          finish_reason: 'tool_calls',
        },
        { index: 1, message: { role: 'assistant', content: 'b' }, finish_reason: 'length' },
      ],
    });
    expect(scanFacts(chat, 'finish_reason')).toEqual({ id: 'chatcmpl-1', finishReasons: ['tool_calls', 'length'] });
    // Anthropic: a tool_use block's id is nested, the message's id may come after it.
    const message = '{"type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}],"id":"msg_1","stop_reason":"tool_use"}';
    expect(scanFacts(message, 'stop_reason')).toEqual({ id: 'msg_1', finishReasons: ['tool_use'] });
    expect(scanFacts('{"id": "msg_2", "stop_reason": null}', 'stop_reason')).toEqual({ id: 'msg_2', finishReasons: [] });
    expect(scanFacts('not json', 'finish_reason')).toEqual({ id: null, finishReasons: [] });
  });

  it('are taken from parsed answers of each protocol', () => {
    expect(messageFacts({ id: 'msg_1', stop_reason: 'max_tokens' })).toEqual({ id: 'msg_1', finishReasons: ['max_tokens'] });
    expect(completionFacts({ id: 'c', choices: [{ finish_reason: 'stop' }, { finish_reason: null }] })).toEqual({ id: 'c', finishReasons: ['stop'] });
    expect(responseFacts({ id: 'resp_1', status: 'completed' })).toEqual({ id: 'resp_1', finishReasons: ['completed'] });
    expect(responseFacts({ id: 'resp_2', status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })).toEqual({
      id: 'resp_2',
      finishReasons: ['max_output_tokens'],
    });
  });

  it('are noted by a stream translator: the first id, one reason per choice index', () => {
    const f = new Facts();
    expect(f.facts()).toEqual({ id: null, finishReasons: [] });
    f.noteId('chatcmpl-1');
    f.noteId('chatcmpl-2');
    f.noteReason('length', 1);
    f.noteReason('stop', 0);
    f.noteReason(null);
    expect(f.facts()).toEqual({ id: 'chatcmpl-1', finishReasons: ['stop', 'length'] });
  });
});
