import { describe, expect, it } from 'vitest';
import { gatewayOptions } from '../options.ts';
import { trustProxyFromEnv } from './trust-proxy.ts';

describe('SVC_TRUST_PROXY', () => {
  it.each<[string | undefined, unknown]>([
    [undefined, false],
    ['', false],
    ['0', false],
    ['1', 1],
    ['2', 2],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    [' 10.0.0.0/8, 127.0.0.1 ,fd00::/8', ['10.0.0.0/8', '127.0.0.1', 'fd00::/8']],
  ])('%j -> %j', (v, want) => {
    expect(trustProxyFromEnv({ SVC_TRUST_PROXY: v })).toEqual(want);
  });

  it.each(['true', '-1', '11', '10.0.0.0/33', 'fd00::/129', 'proxy.example', '10.0.0.1,', '1.2.3.4/8/8'])('refuses %j, naming the setting', (v) => {
    expect(() => trustProxyFromEnv({ SVC_TRUST_PROXY: v })).toThrow(/SVC_TRUST_PROXY must be a hop count .* or a comma-separated list/);
  });

  it('is parsed with the other settings before anything starts', () => {
    expect(gatewayOptions({}, { SVC_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(() => gatewayOptions({}, { SVC_TRUST_PROXY: 'yes' })).toThrow(/SVC_TRUST_PROXY/);
  });
});
