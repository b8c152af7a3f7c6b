import { describe, expect, it } from 'vitest';
import { sampleEvent } from '../../test/helpers/usage-events.ts';
import { decodeEvent, decodeFields } from './event-schema.ts';

describe('decodeEvent', () => {
  const cases: Array<[string, string, string | null]> = [
    ['a full event', JSON.stringify(sampleEvent()), null],
    ['an error without a served model', JSON.stringify(sampleEvent({ servedModel: null, upstream: null, status: 502, errorCode: 'upstream_error' })), null],
    ['broken JSON', '{"eventId":', 'invalid_json'],
    ['a JSON array', '[]', 'invalid_event'],
    ['an id that is not a UUID', JSON.stringify(sampleEvent({ eventId: 'abc' })), 'invalid_event'],
    ['negative tokens', JSON.stringify(sampleEvent({ inputTokens: -1 })), 'invalid_event'],
    ['fractional nano-USD', JSON.stringify(sampleEvent({ costNano: 1.5 })), 'invalid_event'],
    ['a Responses API call', JSON.stringify(sampleEvent({ endpoint: 'responses' })), null],
    ['an unknown endpoint', JSON.stringify({ ...sampleEvent(), endpoint: 'images' }), 'invalid_event'],
    ['a date without time zone', JSON.stringify(sampleEvent({ createdAt: '2026-11-21 10:00' })), 'invalid_event'],
  ];
  it.each(cases)('%s', (_name, json, reason) => {
    const d = decodeEvent(json);
    if (reason === null) expect(d.ok).toBe(true);
    else expect(d).toMatchObject({ ok: false, reason });
  });

  it('drops NUL characters, which Postgres text cannot hold', () => {
    const d = decodeEvent(JSON.stringify(sampleEvent({ taskType: 'a\u0000b' })));
    expect(d.ok && d.event.taskType).toBe('ab');
  });

  it('fills fields older writers left out', () => {
    const { cacheReadTokens: _a, cacheWriteTokens: _b, ttftMs: _c, ...old } = sampleEvent();
    const d = decodeEvent(JSON.stringify(old));
    expect(d.ok && [d.event.cacheReadTokens, d.event.cacheWriteTokens, d.event.ttftMs]).toEqual([0, 0, null]);
  });
});

describe('decodeFields', () => {
  it('reads format 1', () => {
    expect(decodeFields(['v', '1', 'event', JSON.stringify(sampleEvent())]).ok).toBe(true);
  });
  it.each([[['v', '2', 'event', '{}']], [['event', '{}']], [['v', '1']], [[]]])('parks an unknown format %j', (fields) => {
    expect(decodeFields(fields)).toMatchObject({ ok: false, reason: 'bad_format' });
  });
});
