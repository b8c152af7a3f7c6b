// OpenAI's published OpenAPI description (test/openapi/openapi.yaml, a pinned copy: see its README) as a validator:
// each component schema compiled with ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1), `$ref`s to
// `#/components/schemas/...` resolved inside the one document. OpenAPI's own keywords (discriminator, example,
// x-*) are annotations, so ajv runs non-strict.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { ROOT } from './process.ts';

const DOC_ID = 'https://svc.test/openai-openapi.json';

type Schemas = Record<string, { anyOf?: Array<{ $ref?: string }>; properties?: { type?: { enum?: string[] } } }>;

let ajv: Ajv2020 | null = null;
let schemas: Schemas = {};
const compiled = new Map<string, ValidateFunction>();

function instance(): Ajv2020 {
  if (ajv) return ajv;
  const doc = parse(readFileSync(join(ROOT, 'test/openapi/openapi.yaml'), 'utf8'), { maxAliasCount: -1 }) as { components: { schemas: Schemas } };
  const a = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false });
  // OpenAPI 3.0's `nullable: true`, left in places of the 3.1 description (on a `$ref`, an `enum`): null or the
  // schema, as its authors mean it and as the API answers (finish_reason and usage null in stream chunks).
  nullableAsAnyOf(doc.components);
  // Only the schemas: the paths and the rest of the document are not JSON Schema.
  a.addSchema({ $id: DOC_ID, components: doc.components }, DOC_ID);
  schemas = doc.components.schemas;
  ajv = a;
  return a;
}

function nullableAsAnyOf(node: unknown): void {
  if (Array.isArray(node)) {
    for (const x of node) nullableAsAnyOf(x);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  for (const v of Object.values(o)) nullableAsAnyOf(v);
  if (!('nullable' in o)) return;
  const { nullable, ...schema } = o;
  delete o.nullable;
  if (nullable !== true) return;
  for (const k of Object.keys(schema)) delete o[k];
  o.anyOf = [schema, { type: 'null' }];
}

/**
 * The schema of one member of a union of events (ResponseStreamEvent) by its `type`, so a failure names the fields
 * of that event rather than every member of the union.
 */
export function eventSchemaOf(union: string, type: string): string | null {
  instance();
  for (const ref of schemas[union]?.anyOf ?? []) {
    const name = ref.$ref?.split('/').at(-1);
    if (name && schemas[name]?.properties?.type?.enum?.includes(type)) return name;
  }
  return null;
}

/** The validation errors of `value` against components.schemas[name] (empty when it conforms). */
export function openapiErrors(name: string, value: unknown): string[] {
  let validate = compiled.get(name);
  if (!validate) {
    validate = instance().compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
    compiled.set(name, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/**
 * Throws with every error and the value when `value` does not conform to components.schemas[name]. A union of
 * events (ResponseStreamEvent) is checked against the member its `type` names, which must exist.
 */
export function expectConforms(name: string, value: unknown): void {
  const type = (value as { type?: unknown } | null)?.type;
  if (name === 'ResponseStreamEvent') {
    const member = typeof type === 'string' ? eventSchemaOf(name, type) : null;
    if (!member) throw new Error(`Not a ResponseStreamEvent: no event of type ${JSON.stringify(type)} in the description`);
    name = member;
  }
  const errors = openapiErrors(name, value);
  if (errors.length > 0) {
    throw new Error(`Not a valid ${name} (OpenAI's OpenAPI description):\n${errors.slice(0, 20).join('\n')}\n${JSON.stringify(value).slice(0, 2000)}`);
  }
}
