import { describe, expect, it } from 'vitest';
import { formatSse, SseParser } from './parser.ts';

describe('SseParser', () => {
  it('joins events split across chunks, in any place', () => {
    const text = 'event: a\ndata: {"x":1}\n\ndata: two\ndata: lines\n\n: comment\n\ndata: [DONE]\n\n';
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      const evs = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(evs).toEqual([
        { event: 'a', data: '{"x":1}' },
        { event: undefined, data: 'two\nlines' },
        { event: undefined, data: '[DONE]' },
      ]);
      expect(p.pending).toBe(false);
    }
  });

  it('accepts CRLF line ends and multi-byte characters split across chunks', () => {
    const bytes = new TextEncoder().encode('data: héllo 日本\r\n\r\n');
    const p = new SseParser();
    const evs = [...p.push(bytes.slice(0, 9)), ...p.push(bytes.slice(9))];
    expect(evs).toEqual([{ event: undefined, data: 'héllo 日本' }]);
  });

  it('reports an unfinished event as pending', () => {
    const p = new SseParser();
    p.push('data: {"partial":');
    expect(p.pending).toBe(true);
  });

  it('formats events back to the wire', () => {
    expect(formatSse({ event: 'ping', data: '{}' })).toBe('event: ping\ndata: {}\n\n');
    expect(formatSse({ event: undefined, data: 'x' })).toBe('data: x\n\n');
  });
});
