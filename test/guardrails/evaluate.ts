// Precision and recall of each built-in detector over the labelled corpus (corpus.ts), as the gateway runs them
// (folded text, overlaps resolved: scan.ts). A positive is found when its detector's hit covers its value; any hit of
// a detector on a sample of another label, or on a near miss, is a false positive of that detector.
import { detectorOf } from '../../gateway/guardrails/detectors.ts';
import { scanText } from '../../gateway/guardrails/scan.ts';
import type { Detect } from '../../gateway/guardrails/types.ts';
import type { Label, Sample } from './corpus.ts';

export const LABELS: readonly Label[] = ['secrets', 'email', 'phone', 'card', 'iban', 'ip', 'national-id'];

export interface Row {
  detector: Label;
  positives: number;
  found: number;
  falsePositives: number;
  precision: number;
  recall: number;
  /** The positives missed and the near misses flagged, by kind (for the explanation). */
  missed: Record<string, number>;
  flagged: Record<string, number>;
}

export function evaluate(samples: readonly Sample[]): Row[] {
  const detectors: Detect[] = LABELS.map((d) =>
    detectorOf({ name: d, detector: d, action: 'log', restore: false, highEntropy: false, patterns: [], words: [] }),
  );
  const rows: Row[] = LABELS.map((detector) => ({ detector, positives: 0, found: 0, falsePositives: 0, precision: 0, recall: 0, missed: {}, flagged: {} }));
  for (const s of samples) {
    const hits = scanText(s.text, detectors);
    const at = s.value ? s.text.indexOf(s.value) : -1;
    LABELS.forEach((label, i) => {
      const row = rows[i]!;
      const mine = hits.filter((h) => h.detector === i);
      if (s.label === label) {
        row.positives += 1;
        const covered = mine.some((h) => h.start <= at + 1 && h.end >= at + s.value!.length - 1);
        if (covered) row.found += 1;
        else row.missed[s.kind] = (row.missed[s.kind] ?? 0) + 1;
      } else if (mine.length > 0) {
        row.falsePositives += 1;
        row.flagged[s.kind] = (row.flagged[s.kind] ?? 0) + 1;
      }
    });
  }
  for (const r of rows) {
    r.recall = r.positives === 0 ? 1 : r.found / r.positives;
    r.precision = r.found + r.falsePositives === 0 ? 1 : r.found / (r.found + r.falsePositives);
  }
  return rows;
}

export function table(rows: readonly Row[], samples: number): string {
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const lines = [
    `${samples} samples`,
    '',
    '| detector | positives | found | false positives | precision | recall | missed (kind: n) | flagged near misses (kind: n) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.detector} | ${r.positives} | ${r.found} | ${r.falsePositives} | ${pct(r.precision)} | ${pct(r.recall)} | ${fmt(r.missed)} | ${fmt(r.flagged)} |`,
    ),
  ];
  return lines.join('\n');
}

const fmt = (m: Record<string, number>): string =>
  Object.entries(m)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ') || 'none';
