// The built-in detectors on the labelled corpus: every real format found, no near miss flagged, on two seeds; and
// every secret sample that secretlint's recommended preset (the maintained reference) flags is flagged here too.
import { lintSource } from '@secretlint/core';
import { creator } from '@secretlint/secretlint-rule-preset-recommend';
import { describe, expect, it } from 'vitest';
import { secrets } from '../../gateway/guardrails/secrets.ts';
import { corpus } from './corpus.ts';
import { evaluate } from './evaluate.ts';

describe('the labelled corpus', () => {
  for (const seed of [7, 11]) {
    it(`seed ${seed}: every detector finds every positive and flags no near miss`, () => {
      const samples = corpus(seed);
      expect(samples.length).toBeGreaterThan(2000);
      expect(samples.filter((s) => s.label === null).length).toBeGreaterThan(800);
      for (const row of evaluate(samples)) {
        expect({ detector: row.detector, missed: row.missed, flagged: row.flagged }).toEqual({ detector: row.detector, missed: {}, flagged: {} });
        expect(row.positives).toBeGreaterThanOrEqual(60);
      }
    });
  }

  it('flags every secret sample that secretlint flags (and secretlint flags most of them: the formats are real)', async () => {
    const samples = corpus(3, 10).filter((s) => s.label === 'secrets');
    const options = { config: { rules: [{ id: creator.meta.id, rule: creator }] } };
    let referenceFlagged = 0;
    for (const s of samples) {
      const r = await lintSource({ source: { content: s.text, filePath: '/sample.txt', ext: '.txt', contentType: 'text' }, options });
      if (r.messages.length === 0) continue;
      referenceFlagged += 1;
      expect({ kind: s.kind, found: secrets(s.text).length > 0 }).toEqual({ kind: s.kind, found: true });
    }
    expect(referenceFlagged).toBeGreaterThan(samples.length / 2);
  });
});
