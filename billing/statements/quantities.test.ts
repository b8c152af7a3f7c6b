import { describe, expect, it } from 'vitest';
import { buildStatement, minutesText, quantityText, statementCsv, type UsageRow } from './statement.ts';

function row(over: Partial<UsageRow>): UsageRow {
  return { model: 'm', apiKey: 'k', taskType: '', kind: 'chat', requests: 1, inputTokens: 0, outputTokens: 0, costNano: 0, feeNano: 0, ...over };
}

describe('quantities by kind', () => {
  it.each([
    [59, '1.0'],
    [750, '12.5'],
    [752, '12.5'],
    [753, '12.6'],
    [3_600_000, '60,000.0'],
  ])('%i seconds are %s minutes (to the tenth, half up)', (s, m) => {
    expect(minutesText(s)).toBe(m);
  });

  it('says each kind in its unit, then the batch lines at the batch price', () => {
    const s = buildStatement('acme', '2026-11', null, {
      openingNano: 0,
      credits: [],
      usage: [
        row({ model: 'whisper', kind: 'transcription', requests: 3, audioSeconds: 750, costNano: 75_000_000 }),
        row({ model: 'tts', kind: 'speech', requests: 2, characters: 40_210, costNano: 603_150_000 }),
        row({ model: 'short', apiKey: 'k2', kind: 'transcription', requests: 1, audioSeconds: 45, costNano: 4_500_000 }),
        row({ model: 'rr', kind: 'rerank', requests: 2, searchUnits: 3, costNano: 6_000_000 }),
        row({ model: 'chat', kind: 'chat', requests: 300, inputTokens: 1200, outputTokens: 34, batchRequests: 300, batchCostNano: 500_000, costNano: 500_000 }),
      ],
    });
    expect(s.quantities.map(quantityText)).toEqual([
      'Speech \u2014 40,210 characters',
      'Transcriptions \u2014 13.3 minutes of audio',
      'Rerank \u2014 3 search units',
      'Chat \u2014 1,200 tokens in, 34 tokens out',
      'Batch lines \u2014 300 at the batch price',
    ]);
    expect(s.quantities.at(-1)).toMatchObject({ requests: 300, costNano: 500_000 });
    // The usage rows alone add up to the usage total; the kind rows are a summary beside them.
    const lines = statementCsv(s).split('\r\n');
    expect(lines.filter((l) => l.startsWith('kind,'))).toHaveLength(5);
    expect(lines).toContain('kind,,Batch lines \u2014 300 at the batch price,,,,300,,,500000,0.000500000,0.00,,,,,,');
    expect(lines).toContain('usage,,Transcriptions,short,k2,,1,0,0,4500000,0.004500000,0.00,,45,,,,');
  });

  it('counts images on every image route, and the tokens of the routes priced by them', () => {
    const perImage = row({ model: 'dall-e-3', kind: 'image', requests: 2, outputTokens: 3, images: 3, costNano: 240_000_000 });
    const byTokens = row({ model: 'gpt-image-1', kind: 'image', requests: 1, inputTokens: 12, outputTokens: 4160, images: 1, costNano: 166_460_000 });
    const month = (usage: UsageRow[]): string[] => buildStatement('acme', '2026-11', null, { openingNano: 0, credits: [], usage }).quantities.map(quantityText);
    expect(month([perImage])).toEqual(['Images \u2014 3 images']);
    expect(month([row({ ...perImage, requests: 1, outputTokens: 1, images: 1 })])).toEqual(['Images \u2014 1 image']);
    expect(month([byTokens])).toEqual(['Images \u2014 1 image, 12 tokens in, 4,160 image tokens out']);
    // Both kinds of route in one month: every image counted, only the token-priced route's tokens.
    expect(month([perImage, byTokens])).toEqual(['Images \u2014 4 images, 12 tokens in, 4,160 image tokens out']);
    const csv = statementCsv(buildStatement('acme', '2026-11', null, { openingNano: 0, credits: [], usage: [perImage, byTokens] })).split('\r\n');
    const header = (csv[0] ?? '').split(',');
    const images = (model: string): string | undefined => csv.find((l) => l.startsWith(`usage,,Images,${model},`))?.split(',')[header.indexOf('images')];
    expect([images('dall-e-3'), images('gpt-image-1')]).toEqual(['3', '1']);
  });

  it('says seconds under a minute', () => {
    const s = buildStatement('acme', '2026-11', null, { openingNano: 0, credits: [], usage: [row({ kind: 'transcription', audioSeconds: 1, costNano: 1 })] });
    expect(s.quantities.map(quantityText)).toEqual(['Transcriptions \u2014 1 second of audio']);
  });
});
