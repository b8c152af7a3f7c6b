// The detectors a Guardrail fills in: its own regular expressions (named) and word lists (whole words, any case).
import type { Detect, Hit } from './types.ts';

export function regexDetector(patterns: readonly { name: string; pattern: string }[]): Detect {
  const compiled = patterns.map((p) => ({ kind: p.name, re: new RegExp(p.pattern, 'gu') }));
  return (text) => {
    const hits: Hit[] = [];
    for (const { kind, re } of compiled) {
      re.lastIndex = 0;
      for (const m of text.matchAll(re)) if (m[0].length > 0) hits.push({ start: m.index, end: m.index + m[0].length, kind });
    }
    return hits;
  };
}

export function wordsDetector(words: readonly string[], kind = 'word'): Detect {
  if (words.length === 0) return () => [];
  const escaped = [...words].sort((a, b) => b.length - a.length).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
  return (text) => {
    const hits: Hit[] = [];
    for (const m of text.matchAll(re)) hits.push({ start: m.index, end: m.index + m[0].length, kind });
    return hits;
  };
}
