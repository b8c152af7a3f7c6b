// docs/reference/crds.md: every field of every custom resource, from the CRDs the zod schemas generate
// (crds/render.ts), so the page says what the API server checks: types, defaults, bounds, and the CEL rules' messages.
import { CRD_KINDS, type CrdKind } from '../../crds/crd-kinds.ts';
import { crdFor } from '../../crds/render.ts';
import { API_VERSION } from '../../crds/schema/index.ts';
import type { JsonValue, Schema } from '../../crds/structural.ts';
import { cell, code, header, table } from './markdown.ts';

interface Rule {
  path: string;
  rule: string;
  message: string;
}

const asSchema = (v: JsonValue | undefined): Schema | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? v : undefined);

function typeOf(s: Schema): string {
  const items = asSchema(s.items);
  if (s.type === 'array' && items) return `array of ${typeOf(items)}`;
  if (Array.isArray(s.enum)) return `${String(s.type)}: ${s.enum.map((e) => code(String(e))).join(', ')}`;
  if (s['x-kubernetes-int-or-string']) return 'integer or string';
  return String(s.type ?? 'any');
}

function bounds(s: Schema): string[] {
  const out: string[] = [];
  const excl = (k: string): boolean => s[k] === true;
  if (s.minimum !== undefined) out.push(`${excl('exclusiveMinimum') ? '>' : '>='} ${String(s.minimum)}`);
  if (s.maximum !== undefined) out.push(`${excl('exclusiveMaximum') ? '<' : '<='} ${String(s.maximum)}`);
  if (s.minLength !== undefined) out.push(`length >= ${String(s.minLength)}`);
  if (s.maxLength !== undefined) out.push(`length <= ${String(s.maxLength)}`);
  if (s.minItems !== undefined) out.push(`items >= ${String(s.minItems)}`);
  if (s.maxItems !== undefined) out.push(`items <= ${String(s.maxItems)}`);
  if (s.pattern !== undefined) out.push(`pattern ${code(String(s.pattern))}`);
  if (s.format !== undefined) out.push(`format ${String(s.format)}`);
  const keys = s['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys)) out.push(`unique by ${keys.map((k) => code(String(k))).join(', ')}`);
  return out;
}

function rulesOf(path: string, s: Schema): Rule[] {
  const v = s['x-kubernetes-validations'];
  if (!Array.isArray(v)) return [];
  return v.map((r) => {
    const rule = asSchema(r) ?? {};
    const message = rule.message !== undefined ? cell(String(rule.message)) : `${code(String(rule.messageExpression))} (computed by the API server)`;
    const at = rule.fieldPath !== undefined ? `${path}${String(rule.fieldPath)}` : path;
    return { path: at, rule: String(rule.rule), message };
  });
}

/** One row per field under `s`, depth first, and the CEL rules met on the way. */
function walk(path: string, s: Schema, required: boolean, rows: string[][], rules: Rule[]): void {
  const desc = s.description !== undefined ? String(s.description) : '';
  const dflt = s.default !== undefined ? code(JSON.stringify(s.default)) : '';
  rows.push([code(path), cell(typeOf(s)), required ? 'yes' : '', dflt, bounds(s).join('; '), cell(desc)]);
  rules.push(...rulesOf(path, s));
  const items = asSchema(s.items);
  const inner = items && items.type === 'object' ? items : s;
  if (inner !== s) rules.push(...rulesOf(`${path}[]`, inner));
  const props = asSchema(inner.properties);
  if (!props) return;
  const req = new Set(Array.isArray(inner.required) ? inner.required.map(String) : []);
  const base = inner === s ? path : `${path}[]`;
  for (const name of Object.keys(props).sort()) walk(`${base}.${name}`, asSchema(props[name]) ?? {}, req.has(name), rows, rules);
}

function kindSection(k: CrdKind): string {
  const crd = crdFor(k);
  const version = (((crd.spec as Schema).versions as JsonValue[])[0] ?? {}) as Schema;
  const root = asSchema(asSchema(version.schema)?.openAPIV3Schema) ?? {};
  const props = asSchema(root.properties) ?? {};
  const out = [
    `## ${k.kind}`,
    '',
    `${k.description} \`apiVersion: ${API_VERSION}\`, plural \`${k.plural}\`, short names ${k.shortNames.map((n) => `\`${n}\``).join(', ')}.`,
  ];
  // Rules on the whole object (comparing fields) name the field they report on; they are listed with the spec's.
  const objectRules = rulesOf('', root).map((r) => ({ ...r, path: r.path.replace(/^\./, '') || '(object)' }));
  for (const part of ['spec', 'status'] as const) {
    const s = asSchema(props[part]);
    if (!s) continue;
    const rows: string[][] = [];
    const rules: Rule[] = part === 'spec' ? [...objectRules] : [];
    walk(part, s, part === 'spec', rows, rules);
    out.push('', `### ${k.kind} ${part}`, '', table(['field', 'type', 'required', 'default', 'bounds', 'description'], rows));
    if (rules.length > 0) {
      out.push('', 'Rules the API server checks (CEL); the message is what `kubectl` prints when one fails:', '');
      out.push(
        table(
          ['field', 'rule', 'message'],
          rules.map((r) => [code(r.path), code(r.rule), r.message]),
        ),
      );
    }
  }
  return out.join('\n');
}

export function crdsPage(): string {
  const intro = [
    header('Custom resources', 'the zod schemas in crds/schema/ (through crds/render.ts)'),
    'Every field of the kinds of group `gateway.svc.dev`, as the generated CRDs (`crds/*.yaml`) declare them: type,',
    'whether it is required, its default (applied by the API server, and by the standalone gateway when it reads',
    'manifests), its bounds, and the CEL rules with the message `kubectl` prints when one fails. How to use them:',
    '[kubernetes.md](../kubernetes.md).',
    '',
    CRD_KINDS.map((k) => `- [${k.kind}](#${k.kind.toLowerCase()}) (\`${k.shortNames.join('`, `')}\`)`).join('\n'),
  ].join('\n');
  return `${[intro, ...CRD_KINDS.map(kindSection)].join('\n\n')}\n`;
}
