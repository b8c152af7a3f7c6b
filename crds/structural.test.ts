import { describe, expect, it } from 'vitest';
import { convert, toStructural, type Schema } from './structural.ts';

describe('convert', () => {
  it.each<[string, Schema, Schema]>([
    ['drops additionalProperties: false', { type: 'object', additionalProperties: false }, { type: 'object' }],
    ['keeps map values', { type: 'object', additionalProperties: { type: 'string' } }, { type: 'object', additionalProperties: { type: 'string' } }],
    ['drops the safe-integer bounds of .int()', { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }, { type: 'integer' }],
    ['keeps real bounds', { type: 'integer', minimum: 0, exclusiveMinimum: true }, { type: 'integer', minimum: 0, exclusiveMinimum: true }],
    ['turns const into enum', { type: 'string', const: 'x' }, { type: 'string', enum: ['x'] }],
    [
      'carries defaults, descriptions and CEL',
      { type: 'boolean', default: false, description: 'd', 'x-kubernetes-validations': [{ rule: 'self' }] },
      { type: 'boolean', default: false, description: 'd', 'x-kubernetes-validations': [{ rule: 'self' }] },
    ],
    [
      'recurses into properties and items',
      { type: 'object', properties: { a: { type: 'array', items: { type: 'object', additionalProperties: false } } } },
      { type: 'object', properties: { a: { type: 'array', items: { type: 'object' } } } },
    ],
  ])('%s', (_name, input, expected) => {
    expect(convert(input, {}, '')).toEqual(expected);
  });

  it('inlines $ref', () => {
    const defs: Schema = { Name: { type: 'string', maxLength: 3 } };
    expect(convert({ $ref: '#/$defs/Name', description: 'n' }, defs, '')).toEqual({ type: 'string', maxLength: 3, description: 'n' });
  });

  it.each<[string, Schema, string]>([
    ['an untyped node', { properties: {} }, '.x: a structural schema needs a type'],
    ['anyOf', { anyOf: [{ type: 'string' }, { type: 'number' }] }, '.x: keyword "anyOf" has no structural equivalent'],
    ['an unknown $ref', { $ref: '#/$defs/Nope' }, '.x: cannot resolve $ref'],
  ])('refuses %s with its path', (_name, input, message) => {
    expect(() => convert(input, {}, '.x')).toThrow(message);
  });
});

describe('toStructural', () => {
  it('leaves apiVersion, kind and metadata to the API server and requires only spec', () => {
    const out = toStructural(
      {
        type: 'object',
        required: ['apiVersion', 'kind', 'metadata', 'spec'],
        properties: {
          apiVersion: { type: 'string', enum: ['g/v'] },
          kind: { type: 'string', enum: ['K'] },
          metadata: { type: 'object', properties: { name: { type: 'string', pattern: '^a$' } } },
          spec: { type: 'object' },
        },
      },
      'A K.',
    );
    expect(out['required']).toEqual(['spec']);
    expect(out['description']).toBe('A K.');
    expect(out['properties']).toMatchObject({ metadata: { type: 'object' }, kind: { type: 'string' }, spec: { type: 'object' } });
    expect((out['properties'] as Schema)['metadata']).toEqual({ type: 'object' });
  });
});
