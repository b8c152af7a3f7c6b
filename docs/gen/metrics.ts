// docs/reference/metrics.md: every Prometheus metric, read from the prom-client registrations themselves
// (`new Counter({ name, help, labelNames })` and the like, found with the TypeScript parser), by the file that
// registers it; and the Node.js process metrics each process adds under its own prefix.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { cell, code, header, table } from './markdown.ts';
import { codeDirs } from './sources.ts';

const KINDS = new Set(['Counter', 'Gauge', 'Histogram', 'Summary']);
/** The per-call path's own wrappers of prom-client's kinds (gateway/http/fast-metrics.ts), named as the kind they are. */
const WRAPPERS: Record<string, string> = { FastCounter: 'Counter', FastHistogram: 'Histogram' };

export interface Metric {
  file: string;
  kind: string;
  name: string;
  help: string;
  labels: string[];
}

function literal(node: ts.Expression | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

function property(obj: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const p of obj.properties) if (ts.isPropertyAssignment(p) && p.name.getText() === name) return p.initializer;
  return undefined;
}

/** The registrations and default-metric prefixes of one source file. */
function scan(file: string, text: string): { metrics: Metric[]; prefixes: string[] } {
  const metrics: Metric[] = [];
  const prefixes: string[] = [];
  const visit = (node: ts.Node): void => {
    const arg = (ts.isNewExpression(node) || ts.isCallExpression(node)) && node.arguments?.[0];
    if (arg && ts.isObjectLiteralExpression(arg)) {
      const callee = node.expression.getText();
      const kind = WRAPPERS[callee] ?? callee;
      if (ts.isNewExpression(node) && KINDS.has(kind)) {
        const name = literal(property(arg, 'name'));
        const labels = property(arg, 'labelNames');
        if (name === undefined) throw new Error(`${file}: a ${callee} whose name is not a literal; docs/gen/metrics.ts cannot document it`);
        const labelNames = labels && ts.isArrayLiteralExpression(labels) ? labels.elements.map((e) => literal(e) ?? e.getText()) : [];
        metrics.push({ file, kind, name, help: literal(property(arg, 'help')) ?? '', labels: labelNames });
      }
      if (ts.isCallExpression(node) && callee === 'collectDefaultMetrics') {
        const prefix = literal(property(arg, 'prefix'));
        if (prefix) prefixes.push(prefix);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return { metrics, prefixes };
}

export function registeredMetrics(root: string): { metrics: Metric[]; prefixes: Array<{ file: string; prefix: string }> } {
  const metrics: Metric[] = [];
  const prefixes: Array<{ file: string; prefix: string }> = [];
  for (const dir of codeDirs(root)) {
    const files = (readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    for (const f of files.sort()) {
      const file = `${dir}/${f}`;
      const text = readFileSync(join(root, file), 'utf8');
      if (!text.includes('prom-client')) continue;
      const found = scan(file, text);
      metrics.push(...found.metrics);
      prefixes.push(...found.prefixes.map((prefix) => ({ file, prefix })));
    }
  }
  return { metrics, prefixes };
}

export function metricsPage(root: string): string {
  const { metrics, prefixes } = registeredMetrics(root);
  const files = [...new Set(metrics.map((m) => m.file))];
  const sections = files.map((file) => {
    const rows = metrics.filter((m) => m.file === file).map((m) => [code(m.name), m.kind.toLowerCase(), m.labels.map((l) => code(l)).join(', '), cell(m.help)]);
    return [`## ${file}`, '', table(['metric', 'type', 'labels', 'what it counts'], rows)].join('\n');
  });
  return [
    header('Metrics', 'the prom-client registrations of the code'),
    'Every metric, by the file that registers it, with its labels. Labels stay bounded: an endpoint, a configured model,',
    'an account (accounts are bounded by config), a kind, a stage, a reason or a source, never a key, a stream or a task.',
    'Where each process serves them, and what they mean for operations: [operations.md](../operations.md#metrics),',
    '[kubernetes.md](../kubernetes.md) (the operator) and [operations.md](../operations.md#alerts-and-dashboards) (alerts).',
    '',
    sections.join('\n\n'),
    '',
    '## Process metrics',
    '',
    "Each process also exports prom-client's default Node.js metrics (CPU, memory, event loop lag, garbage collection) under",
    'its own prefix:',
    '',
    table(
      ['prefix', 'registered in'],
      prefixes.map((p) => [code(p.prefix), code(p.file)]),
    ),
    '',
  ].join('\n');
}
