// SVC_SETTLE_DURABILITY as the gateway parses it (gateway/options.ts): off by default, postgres only with a Postgres to
// write to, and a readable error for anything else, before anything starts.
import { describe, expect, it } from 'vitest';
import { gatewayOptions } from '../options.ts';

const PG = 'postgres://svc@127.0.0.1:5432/svc';

describe('SVC_SETTLE_DURABILITY', () => {
  it.each([
    [{}, { durability: 'redis' }],
    [{ SVC_SETTLE_DURABILITY: 'redis', DATABASE_URL: PG }, { durability: 'redis' }],
    [
      { SVC_SETTLE_DURABILITY: 'postgres', DATABASE_URL: PG },
      { durability: 'postgres', databaseUrl: PG },
    ],
  ])('%j -> %j', (env, settle) => {
    expect(gatewayOptions({}, env).settle).toEqual(settle);
  });

  it('applies to cluster mode too', () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379', SVC_KEY_PEPPER: 'p', SVC_SETTLE_DURABILITY: 'postgres', DATABASE_URL: PG };
    expect(gatewayOptions({ cluster: true }, env).settle).toEqual({ durability: 'postgres', databaseUrl: PG });
  });

  it.each([
    [{ SVC_SETTLE_DURABILITY: 'postgres' }, 'SVC_SETTLE_DURABILITY=postgres needs DATABASE_URL'],
    [{ SVC_SETTLE_DURABILITY: 'disk', DATABASE_URL: PG }, 'SVC_SETTLE_DURABILITY must be one of redis, postgres, got "disk"'],
  ])('refuses %j', (env, message) => {
    expect(() => gatewayOptions({}, env)).toThrow(message);
  });
});
