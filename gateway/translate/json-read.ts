// Defensive readers for client bodies whose nested blocks the HTTP schema checks only loosely: each reader
// narrows one value or refuses the request with a 400 naming the path, never a 5xx.
import { GatewayError } from '../errors/catalog.ts';

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function invalid(path: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `${path}: ${message}`, { param: path });
}

/** Content the chosen upstream cannot receive: refused rather than silently lost. */
export function unsupported(path: string, message: string): GatewayError {
  return new GatewayError('unsupported_content', `${path}: ${message}`, { param: path });
}

export function objectAt(v: unknown, path: string): Json {
  if (!isObject(v)) throw invalid(path, 'must be an object');
  return v;
}

export function stringAt(v: unknown, path: string): string {
  if (typeof v !== 'string') throw invalid(path, 'must be a string');
  return v;
}

export function optionalString(v: unknown, path: string): string | undefined {
  return v === undefined || v === null ? undefined : stringAt(v, path);
}

export function arrayAt(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw invalid(path, 'must be an array');
  return v;
}

/** Blocks of a content field: a string, or an array of objects each with a string `type`. */
export function blocksAt(v: unknown, path: string): Json[] {
  return arrayAt(v, path).map((b, i) => {
    const o = objectAt(b, `${path}[${i}]`);
    stringAt(o.type, `${path}[${i}].type`);
    return o;
  });
}

export function parseUpstream(body: string): Json {
  try {
    const v = JSON.parse(body) as unknown;
    if (isObject(v)) return v;
  } catch {
    /* below */
  }
  throw new GatewayError('upstream_error', 'The upstream answered with a body that is not a JSON object.');
}
