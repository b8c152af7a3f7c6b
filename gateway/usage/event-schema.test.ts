import { describe, expect, it } from 'vitest';
import { sampleEvent } from '../../test/helpers/usage-events.ts';
import { decodeEntry, decodeEvent, decodeFields, entryEvents } from './event-schema.ts';

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
    ['an image call counted in images', JSON.stringify(sampleEvent({ endpoint: 'images.generations', unit: 'images', units: 2 })), null],
    ['an unknown unit', JSON.stringify({ ...sampleEvent(), unit: 'pixels', units: 2 }), 'invalid_event'],
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

describe('decodeEntry', () => {
  const a = sampleEvent();
  const b = sampleEvent({ costNano: 7 });
  it('reads format 1 as one event and format 2 as its events in order', () => {
    expect(decodeEntry(['v', '1', 'event', JSON.stringify(a)]).map((d) => d.ok && d.event.eventId)).toEqual([a.eventId]);
    const two = decodeEntry(['v', '2', 'events', JSON.stringify([a, b])]);
    expect(two.map((d) => d.ok && [d.event.eventId, d.event.costNano])).toEqual([
      [a.eventId, a.costNano],
      [b.eventId, 7],
    ]);
  });
  it('parks only the bad event of a format 2 entry', () => {
    const d = decodeEntry(['v', '2', 'events', JSON.stringify([a, { ...b, inputTokens: -1 }])]);
    expect(d.map((x) => x.ok || x.reason)).toEqual([true, 'invalid_event']);
  });
  it.each([
    [['v', '2', 'events', '[{'], 'invalid_json'],
    [['v', '2', 'events', '{}'], 'bad_format'],
    [['v', '2', 'events', '[]'], 'bad_format'],
    [['v', '2', 'event', '{}'], 'bad_format'],
    [['v', '3', 'events', '[]'], 'bad_format'],
  ])('parks an unreadable entry %j whole', (fields, reason) => {
    expect(decodeEntry(fields)).toEqual([expect.objectContaining({ ok: false, reason })]);
  });
  it('entryEvents: the raw events of either format, none for one that does not read', () => {
    expect(entryEvents(['v', '2', 'events', JSON.stringify([a, b])])).toEqual([a, b]);
    expect(entryEvents(['v', '1', 'event', JSON.stringify(a)])).toEqual([a]);
    expect(entryEvents(['v', '2', 'events', '[{'])).toEqual([]);
  });
});
