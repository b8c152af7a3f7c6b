import { describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { toCsv } from './csv.ts';
import { cellsOf } from './memory-source.ts';
import { summarize } from './report.ts';

function ev(over: Partial<UsageEvent>): UsageEvent {
  return {
    eventId: 'e',
    createdAt: '2026-03-02T10:00:00.000Z',
    account: 'acme',
    apiKey: 'k1',
    taskType: null,
    endpoint: 'chat.completions',
    requestedModel: 'mock-mini',
    servedModel: 'mock-mini',
    upstream: 'mock',
    fallback: false,
    fallbackReason: null,
    status: 200,
    errorCode: null,
    stream: false,
    inputTokens: 10,
    outputTokens: 5,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costNano: 1000,
    feeNano: 38,
    latencyMs: 3,
    ttftMs: null,
    ...over,
  };
}

const events = [
  ev({}),
  ev({ taskType: 'summarize', costNano: 3000, createdAt: '2026-03-03T23:59:59.000Z' }),
  ev({ taskType: 'summarize', status: 429, costNano: 0, inputTokens: 0, outputTokens: 0 }),
  ev({ account: 'other', costNano: 99 }),
  ev({ createdAt: '2026-03-05T00:00:00.000Z' }),
  ev({ apiKey: 'k2', fallback: true, servedModel: 'mock-pro', costNano: 7 }),
];

describe('usage report', () => {
  const q = { accounts: ['acme'], from: '2026-03-01', to: '2026-03-04', groupBy: 'task' as const };
  const report = summarize(cellsOf(events, q), q.from, q.to);

  it('groups by task with one (untagged) row, only the accounts and days asked for', () => {
    expect(report.rows.map((r) => [r.group, r.requests, r.errors, r.costNano])).toEqual([
      ['summarize', 2, 1, 3000],
      ['(untagged)', 2, 0, 1007],
    ]);
  });

  it('totals equal the sum of the rows and of the days', () => {
    const sum = (k: 'requests' | 'costNano' | 'inputTokens' | 'fallbacks'): number => report.rows.reduce((s, r) => s + r[k], 0);
    expect(report.totals).toMatchObject({ requests: sum('requests'), costNano: sum('costNano'), inputTokens: sum('inputTokens'), fallbacks: sum('fallbacks') });
    expect(report.days.map((d) => d.day)).toEqual(['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04']);
    expect(report.days.reduce((s, d) => s + d.costNano, 0)).toBe(report.totals.costNano);
  });

  it('groups by model (served, else requested) and by key', () => {
    const byModel = summarize(cellsOf(events, { ...q, groupBy: 'model' }), q.from, q.to);
    expect(byModel.rows.map((r) => r.group).sort()).toEqual(['mock-mini', 'mock-pro']);
    const byKey = summarize(cellsOf(events, { ...q, groupBy: 'key' }), q.from, q.to);
    expect(byKey.rows.map((r) => r.group).sort()).toEqual(['k1', 'k2']);
  });

  it('exports the table as CSV, formulas defused', () => {
    const csv = toCsv(summarize(cellsOf([ev({ taskType: '=HYPERLINK("x")' })], q), q.from, q.to), 'task');
    expect(csv).toBe(
      'Task,Requests,Errors,Fallbacks,Tokens in,Tokens out,Spend (USD),Cache hits,Saved by cache (USD),Search units,Audio seconds,Characters,Images,Batch lines,Batch spend (USD)\r\n' +
        '"\'=HYPERLINK(""x"")",1,0,0,10,5,0.000001000,0,0.000000000,0,0,0,0,0,0.000000000\r\nTotal,1,0,0,10,5,0.000001000,0,0.000000000,0,0,0,0,0,0.000000000\r\n',
    );
  });

  it('groups by kind of call, a rerank counting search units (not output tokens), as labelled for users', () => {
    const mixed = [
      ev({ endpoint: 'chat.completions', inputTokens: 10, outputTokens: 5 }),
      ev({ endpoint: 'responses', inputTokens: 4, outputTokens: 2 }),
      ev({ endpoint: 'completions', inputTokens: 7, outputTokens: 3 }),
      ev({ endpoint: 'rerank', inputTokens: 40, outputTokens: 2, costNano: 4000 }),
      ev({ endpoint: 'rerank', inputTokens: 0, outputTokens: 1, costNano: 2000 }),
      ev({ endpoint: 'moderations', inputTokens: 6, outputTokens: 0 }),
    ];
    const byKind = summarize(cellsOf(mixed, { ...q, groupBy: 'kind' }), q.from, q.to);
    const rows = Object.fromEntries(byKind.rows.map((r) => [r.group, [r.requests, r.inputTokens, r.outputTokens, r.searchUnits]]));
    expect(rows).toEqual({
      Chat: [2, 14, 7, 0],
      'Text completions': [1, 7, 3, 0],
      Rerank: [2, 40, 0, 3],
      Moderation: [1, 6, 0, 0],
    });
    expect(byKind.totals).toMatchObject({ outputTokens: 10, searchUnits: 3 });
    expect(toCsv(byKind, 'kind').split('\r\n')[0]).toBe(
      'Kind,Requests,Errors,Fallbacks,Tokens in,Tokens out,Spend (USD),Cache hits,Saved by cache (USD),Search units,Audio seconds,Characters,Images,Batch lines,Batch spend (USD)',
    );
  });

  it('shows each kind in its own unit: seconds of audio, characters, images, and the batch lines with their cost', () => {
    const mixed = [
      ev({ endpoint: 'audio.transcriptions', inputTokens: 0, outputTokens: 0, unit: 'seconds', units: 750, costNano: 75_000 }),
      ev({ endpoint: 'audio.translations', inputTokens: 0, outputTokens: 0, unit: 'seconds', units: 30, costNano: 3_000 }),
      ev({ endpoint: 'audio.speech', inputTokens: 0, outputTokens: 0, unit: 'characters', units: 40_210, costNano: 40_210 }),
      ev({ endpoint: 'chat.completions', batch: true, costNano: 500 }),
      ev({ endpoint: 'chat.completions', batch: true, costNano: 500 }),
      ev({ endpoint: 'chat.completions', costNano: 1_000 }),
      ev({ endpoint: 'images.generations', inputTokens: 0, outputTokens: 2, unit: 'images', units: 2, costNano: 80_000 }),
      ev({ endpoint: 'images.edits', inputTokens: 12, outputTokens: 4_160, unit: 'images', units: 1, costNano: 166_460 }),
    ];
    const byKind = summarize(cellsOf(mixed, { ...q, groupBy: 'kind' }), q.from, q.to);
    const rows = Object.fromEntries(byKind.rows.map((r) => [r.group, [r.requests, r.audioSeconds, r.characters, r.images, r.batchRequests, r.batchCostNano]]));
    expect(rows).toEqual({
      Transcriptions: [2, 780, 0, 0, 0, 0],
      Speech: [1, 0, 40_210, 0, 0, 0],
      Chat: [3, 0, 0, 0, 2, 1_000],
      Images: [2, 0, 0, 3, 0, 0],
    });
    expect(byKind.totals).toMatchObject({ audioSeconds: 780, characters: 40_210, images: 3, batchRequests: 2, batchCostNano: 1_000, costNano: 366_670 });
    const csv = toCsv(byKind, 'kind').split('\r\n');
    expect(csv).toContain('Chat,3,0,0,30,15,0.000002000,0,0.000000000,0,0,0,0,2,0.000001000');
    expect(csv).toContain('Transcriptions,2,0,0,0,0,0.000078000,0,0.000000000,0,780,0,0,0,0.000000000');
    expect(csv).toContain('Images,2,0,0,12,4162,0.000246460,0,0.000000000,0,0,0,3,0,0.000000000');
    expect(csv).toContain('Total,8,0,0,42,4177,0.000366670,0,0.000000000,0,780,40210,3,2,0.000001000');
  });
});
