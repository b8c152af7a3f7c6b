import { describe, expect, it } from 'vitest';
import { redisKeys } from './redis-keys.ts';

describe('redisKeys', () => {
  it('tags every key an account script touches with the account, so one Cluster slot holds them', () => {
    const k = redisKeys('svc');
    const all = [...Object.values(k.account('acme')), ...Object.values(k.window('acme', 'k1'))];
    for (const name of all) expect(name).toMatch(/^svc:\{a:acme\}:/);
    expect(new Set(all).size).toBe(all.length);
  });

  it('keeps the names existing deployments hold (an upgrade finds its balances, windows and config)', () => {
    const k = redisKeys('p');
    expect([
      k.account('a').acct,
      k.window('a', 'k').calls,
      k.window('a', 'k').tpmn,
      k.key('h'),
      k.configSnapshot('v1'),
      k.configCurrent,
      k.usageStreams,
    ]).toEqual(['p:{a:a}:acct', 'p:{a:a}:tpm:k', 'p:{a:a}:tpmn:k', 'p:key:h', 'p:config:snapshots:v1', 'p:config:current', 'p:usage:streams']);
  });
});
