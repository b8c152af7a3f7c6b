// Reads manifests as the API server would: validates each document by kind, drops unknown fields with a
// warning, and names file, object and field in every problem.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Composer, parseAllDocuments, Parser } from 'yaml';
import type { z } from 'zod';
import { API_VERSION, KINDS, type KindName } from '../../crds/schema/index.ts';
import type { ManifestSet } from '../contract/compile.ts';

export interface SourcedDoc {
  source: string; // file path (and document index)
  doc: unknown;
}

export interface ManifestIssue {
  source: string;
  object: string;
  field: string;
  message: string;
}

export interface ParsedManifests {
  set: ManifestSet;
  errors: ManifestIssue[];
  warnings: ManifestIssue[];
}

const LISTS: Record<KindName, keyof ManifestSet> = {
  Plan: 'plans',
  Account: 'accounts',
  ApiKey: 'apiKeys',
  ModelRoute: 'modelRoutes',
  Secret: 'secrets',
  Incident: 'incidents',
  McpServer: 'mcpServers',
  Guardrail: 'guardrails',
};

function pathString(path: readonly PropertyKey[]): string {
  return path.reduce<string>((s, p) => (typeof p === 'number' ? `${s}[${p}]` : s ? `${s}.${String(p)}` : String(p)), '');
}

/** Paths present in `input` but absent from `parsed`: the fields zod dropped as unknown. */
function unknownFields(input: unknown, parsed: unknown, path: PropertyKey[] = []): string[] {
  if (Array.isArray(input) && Array.isArray(parsed)) {
    return input.flatMap((v, i) => unknownFields(v, parsed[i], [...path, i]));
  }
  if (!isObject(input) || !isObject(parsed)) return [];
  const top = path.length === 0 ? new Set(['apiVersion', 'kind', 'metadata', 'status']) : new Set<string>();
  return Object.keys(input).flatMap((k) => {
    if (top.has(k) && k === 'metadata') return [];
    if (!(k in parsed)) return [pathString([...path, k])];
    return unknownFields(input[k], parsed[k], [...path, k]);
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function objectLabel(doc: Record<string, unknown>): string {
  const meta = isObject(doc.metadata) ? doc.metadata : {};
  return `${String(doc.kind ?? '?')}/${String(meta.name ?? '?')}`;
}

export function parseManifests(docs: SourcedDoc[]): ParsedManifests {
  const set: ManifestSet = { plans: [], accounts: [], apiKeys: [], modelRoutes: [], secrets: [], incidents: [], mcpServers: [], guardrails: [] };
  const errors: ManifestIssue[] = [];
  const warnings: ManifestIssue[] = [];
  for (const { source, doc } of docs) {
    if (doc === null || doc === undefined) continue;
    if (!isObject(doc)) {
      errors.push({ source, object: '?', field: '', message: 'a manifest must be a mapping' });
      continue;
    }
    const object = objectLabel(doc);
    const kind = doc.kind as KindName;
    const schema: z.ZodType | undefined = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
    if (!schema) {
      warnings.push({ source, object, field: 'kind', message: `kind ${String(doc.kind)} is not used by the gateway; ignored` });
      continue;
    }
    if (kind !== 'Secret' && doc.apiVersion !== API_VERSION) {
      errors.push({ source, object, field: 'apiVersion', message: `must be ${API_VERSION}` });
      continue;
    }
    const r = schema.safeParse(doc);
    if (!r.success) {
      for (const i of r.error.issues) errors.push({ source, object, field: pathString(i.path), message: i.message });
      continue;
    }
    for (const f of unknownFields(doc, r.data)) warnings.push({ source, object, field: f, message: 'unknown field dropped' });
    (set[LISTS[kind]] as unknown[]).push(r.data);
  }
  return { set, errors, warnings };
}

function yamlFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()
    .map((f) => join(path, f));
}

/**
 * A file's documents as plain values, each converted as soon as it is parsed, so a file of 100,000 documents never
 * holds 100,000 syntax trees at once (a process's memory would keep that peak). A file with a syntax error is parsed
 * again whole, for errors that say the line and column.
 */
function fileDocs(file: string): Array<{ doc: unknown } | { errors: string[] }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ doc: unknown }> = [];
  for (const d of new Composer().compose(new Parser().parse(text))) {
    if (d.errors.length > 0) return withErrors(text);
    out.push({ doc: d.toJS() });
  }
  return out;
}

function withErrors(text: string): Array<{ doc: unknown } | { errors: string[] }> {
  const all = parseAllDocuments(text);
  return (Array.isArray(all) ? all : [all]).map((d) => (d.errors.length > 0 ? { errors: d.errors.map((e) => e.message) } : { doc: d.toJS() }));
}

/** Reads a YAML file with several documents, or every .yaml/.yml/.json file of a folder. */
export function readManifestFiles(path: string): { docs: SourcedDoc[]; errors: ManifestIssue[] } {
  const docs: SourcedDoc[] = [];
  const errors: ManifestIssue[] = [];
  for (const file of yamlFiles(path)) {
    const list = fileDocs(file);
    list.forEach((d, i) => {
      const source = list.length > 1 ? `${file}#${i + 1}` : file;
      if ('errors' in d) {
        for (const message of d.errors) errors.push({ source, object: '?', field: '', message });
        return;
      }
      docs.push({ source, doc: d.doc });
    });
  }
  return { docs, errors };
}

export function formatIssue(i: ManifestIssue): string {
  return `${i.source}: ${i.object}${i.field ? ` field ${i.field}` : ''}: ${i.message}`;
}
