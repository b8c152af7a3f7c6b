// Turns zod's JSON Schema (target openapi-3.0, io input) into a Kubernetes structural schema: every node typed,
// no $ref, no additionalProperties: false (pruning does that job), no keywords the API server rejects.
// Anything it cannot map fails generation with the path, so a new zod construct is noticed here, not at install.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type Schema = { [key: string]: JsonValue };

/** Keywords of apiextensions.k8s.io/v1 JSONSchemaProps that zod can produce and structural schemas allow. */
const ALLOWED = new Set([
  'type',
  'format',
  'description',
  'title',
  'default',
  'nullable',
  'enum',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
]);

/** zod writes these for every `.int()`; they say nothing an int64 does not. */
const SAFE_INT_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

function isSchema(v: JsonValue | undefined): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function resolveRef(ref: JsonValue, defs: Schema, path: string): Schema {
  const name = typeof ref === 'string' ? ref.replace(/^#\/(\$defs|definitions)\//, '') : '';
  const target = defs[name];
  if (!isSchema(target)) throw new Error(`${path}: cannot resolve $ref ${String(ref)}`);
  return target;
}

function convertKeyword(key: string, value: JsonValue, defs: Schema, path: string): JsonValue | undefined {
  switch (key) {
    case 'properties': {
      if (!isSchema(value)) throw new Error(`${path}.properties: not an object`);
      const out: Schema = {};
      for (const [name, child] of Object.entries(value)) out[name] = convert(child, defs, `${path}.${name}`);
      // An empty map is not stored by the API server (omitempty): declaring one makes server-side applies by two
      // managers (kubectl, then helm) conflict over a field neither can own.
      return Object.keys(out).length === 0 ? undefined : out;
    }
    case 'items':
      return convert(value, defs, `${path}[]`);
    case 'additionalProperties':
      // false is zod's strict/default object; the API server prunes unknown fields instead.
      return value === false ? undefined : convert(value, defs, `${path}{}`);
    case 'minimum':
    case 'maximum':
      return typeof value === 'number' && SAFE_INT_BOUNDS.has(value) ? undefined : value;
    default:
      return value;
  }
}

export function convert(input: JsonValue, defs: Schema, path: string): Schema {
  if (!isSchema(input)) throw new Error(`${path}: schema is not an object`);
  const node = input['$ref'] === undefined ? input : { ...resolveRef(input['$ref'], defs, path), ...input };
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' || key === '$schema' || key === '$defs' || key === 'definitions' || key === 'id') continue;
    if (key === 'const') {
      out['enum'] = [value];
      continue;
    }
    if (!ALLOWED.has(key) && !key.startsWith('x-kubernetes-')) {
      throw new Error(`${path}: keyword "${key}" has no structural equivalent (anyOf/oneOf/allOf need explicit types)`);
    }
    const converted = convertKeyword(key, value, defs, path);
    if (converted !== undefined) out[key] = converted;
  }
  const untyped = out['x-kubernetes-preserve-unknown-fields'] === true || out['x-kubernetes-int-or-string'] === true;
  if (out['type'] === undefined && !untyped) throw new Error(`${path}: a structural schema needs a type`);
  return out;
}

/**
 * The openAPIV3Schema of a CRD version from the JSON Schema of a whole object (apiVersion, kind, metadata, spec,
 * status). apiVersion, kind and metadata are the API server's: only their types are declared.
 */
export function toStructural(jsonSchema: Schema, description: string): Schema {
  const defs = isSchema(jsonSchema['$defs']) ? jsonSchema['$defs'] : {};
  const root = convert(jsonSchema, defs, '');
  const props = root['properties'];
  if (!isSchema(props) || !isSchema(props['spec'])) throw new Error('the object schema has no spec');
  const out: Schema = {
    ...root,
    description,
    properties: {
      ...props,
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: { type: 'object' },
    },
    required: ['spec'],
  };
  return out;
}
