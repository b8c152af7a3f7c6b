// Custom resources from the API server, validated by the same zod schemas that generate the CRDs (defaults applied).
import type { z } from 'zod';
import type { CrKind, CrOf } from '../../crds/crd-kinds.ts';
import { CR_SCHEMAS, secret, type Secret } from '../../crds/schema/index.ts';
import { API_VERSION } from '../../crds/schema/common.ts';
import type { V1Secret } from '@kubernetes/client-node';
import type { CustomObject } from '../kube/clients.ts';

export type Parsed<K extends CrKind> = CrOf<K>;

export type ParseResult<K extends CrKind> = { ok: true; value: Parsed<K> } | { ok: false; message: string };

/**
 * Results per object as the API server returned it (the informer caches replace an object on every change, and a
 * resourceVersion names one state of it): a compile of the namespace validates each object once, not once per
 * compile. The results are shared: callers must not change them.
 */
const parsedCache = new WeakMap<object, { resourceVersion: string; result: ParseResult<CrKind> }>();
const secretCache = new WeakMap<object, { resourceVersion: string; result: Secret | null }>();

/**
 * Spec and metadata, validated; the status is left out (the operator writes it, and one written by an older version,
 * say a number where a string is now, must not make the object invalid).
 */
export function parseCr<K extends CrKind>(kind: K, obj: CustomObject): ParseResult<K> {
  const rv = obj.metadata?.resourceVersion;
  const hit = rv ? parsedCache.get(obj) : undefined;
  if (hit && hit.resourceVersion === rv) return hit.result as ParseResult<K>;
  const result = parseUncached(kind, obj);
  if (rv) parsedCache.set(obj, { resourceVersion: rv, result });
  return result;
}

function parseUncached<K extends CrKind>(kind: K, obj: CustomObject): ParseResult<K> {
  const schema: z.ZodType<Parsed<K>> = CR_SCHEMAS[kind] as unknown as z.ZodType<Parsed<K>>;
  const { status: _status, ...rest } = obj;
  const r = schema.safeParse({ ...rest, apiVersion: API_VERSION, kind });
  if (r.success) return { ok: true, value: r.data };
  const first = r.error.issues[0];
  return { ok: false, message: `${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}` };
}

/** A Secret as the compiler reads it (data is base64, as the API server stores it). */
export function secretManifest(s: V1Secret): Secret | null {
  const rv = s.metadata?.resourceVersion;
  const hit = rv ? secretCache.get(s) : undefined;
  if (hit && hit.resourceVersion === rv) return hit.result;
  const r = secret.safeParse({ apiVersion: 'v1', kind: 'Secret', metadata: { name: s.metadata?.name }, data: s.data ?? {} });
  const result = r.success ? r.data : null;
  if (rv) secretCache.set(s, { resourceVersion: rv, result });
  return result;
}

/** The value under `key` of a Secret's data, decoded and trimmed; undefined when absent. */
export function secretValue(s: V1Secret | undefined, key: string): string | undefined {
  const raw = s?.data?.[key];
  return raw === undefined ? undefined : Buffer.from(raw, 'base64').toString('utf8').trim();
}
