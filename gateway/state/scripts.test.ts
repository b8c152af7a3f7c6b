// Each script's named KEYS and ARGV are its header's, in order: the header is the documentation callers read.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SCRIPTS } from './scripts.ts';

const DIR = new URL('./lua/', import.meta.url);

function header(source: string, what: 'KEYS' | 'ARGV'): string[] {
  const line = source.split('\n').find((l) => l.startsWith(`-- ${what}:`));
  if (line === undefined) throw new Error(`no "-- ${what}:" line`);
  const words = line
    .slice(`-- ${what}:`.length)
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '');
  const end = words.findIndex((w) => w.startsWith('('));
  return end < 0 ? words : words.slice(0, end);
}

describe('Lua scripts', () => {
  it.each(Object.values(SCRIPTS).map((s) => [s.name, s] as const))('%s: names match its header', (name, s) => {
    const source = readFileSync(new URL(`${name}.lua`, DIR), 'utf8');
    expect(header(source, 'KEYS')).toEqual([...s.keyNames]);
    expect(header(source, 'ARGV')).toEqual([...s.argNames]);
  });

  it('every script file is declared', () => {
    const files = readdirSync(DIR)
      .filter((f) => f.endsWith('.lua') && f !== 'lib.lua')
      .map((f) => f.replace(/\.lua$/, ''))
      .sort();
    expect(
      Object.values(SCRIPTS)
        .map((s) => s.name)
        .sort(),
    ).toEqual(files);
  });
});
