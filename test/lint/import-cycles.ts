// The import graph of the source folders, type-only imports included (a type that two files take from each other
// is still a circle a reader has to untangle), and its circles: Tarjan's strongly connected components.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

export type Graph = Map<string, string[]>;

/** file -> the files it imports (relative imports only; packages are not ours to untangle). */
export function importGraph(root: string, dirs: string[]): Graph {
  const graph: Graph = new Map();
  for (const dir of dirs) {
    const files = (readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.ts'));
    for (const f of files) {
      const file = join(dir, f);
      const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, false);
      const targets = info.importedFiles
        .map((i) => i.fileName)
        .filter((s) => s.startsWith('.'))
        .map((s) => relative(root, join(root, dirname(file), s)))
        .filter((t) => existsSync(join(root, t)));
      graph.set(file, [...new Set(targets)].sort());
    }
  }
  return graph;
}

/** Every circle of the graph, as the files in it (sorted), largest first. */
export function cycles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => b.length - a.length || (a[0] as string).localeCompare(b[0] as string));
}
