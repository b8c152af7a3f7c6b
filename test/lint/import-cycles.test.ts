// No import circles in the source: two files that need each other's names share a third file instead. Type-only
// imports count (eslint's import-zone rules allow them across layers, but a circle is still a circle).
import { describe, expect, it } from 'vitest';
import { codeDirs } from '../../docs/gen/sources.ts';
import { ROOT } from '../helpers/process.ts';
import { cycles, importGraph, type Graph } from './import-cycles.ts';

describe('import circles', () => {
  it('there are none in the code (every top-level folder of TypeScript but test/) nor in docs/gen/', () => {
    expect(codeDirs(ROOT)).toEqual(expect.arrayContaining(['console', 'crds', 'gateway', 'operator']));
    const graph = importGraph(ROOT, [...codeDirs(ROOT), 'docs/gen']);
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph), 'files that import each other, directly or around a circle: move what they share to a file both import').toEqual([]);
  });

  it('finds a circle of two, a longer one and a self-import, and nothing in a tree', () => {
    const graph: Graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts', 'shared.ts']],
      ['c.ts', ['d.ts']],
      ['d.ts', ['e.ts']],
      ['e.ts', ['c.ts', 'shared.ts']],
      ['self.ts', ['self.ts']],
      ['shared.ts', []],
    ]);
    expect(cycles(graph)).toEqual([['c.ts', 'd.ts', 'e.ts'], ['a.ts', 'b.ts'], ['self.ts']]);
    expect(
      cycles(
        new Map([
          ['a.ts', ['shared.ts']],
          ['b.ts', ['shared.ts']],
          ['shared.ts', []],
        ]),
      ),
    ).toEqual([]);
  });
});
