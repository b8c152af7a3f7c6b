// The key cache's size setting as docs/operations.md (Sizing) gives it: the example's environment is what a cluster
// process takes, and a bad value is refused before anything starts, naming the setting.
import { describe, expect, it } from 'vitest';
import { gatewayOptions } from '../../gateway/options.ts';
import { DEFAULT_KEY_CACHE_SIZE } from '../../gateway/pipeline/key-cache.ts';
import { docExample } from '../helpers/docs.ts';

function exampleEnv(): Record<string, string> {
  const line = docExample('docs/operations.md', 'key-cache-size')
    .split('\n')
    .find((l) => l.includes('npm run gateway')) as string;
  return Object.fromEntries([...line.matchAll(/\b([A-Z_]+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]));
}

describe('SVC_KEY_CACHE_SIZE', () => {
  it("the docs' example sizes the cache of a cluster process", () => {
    const env: Record<string, string> = { ...exampleEnv(), SVC_KEY_PEPPER: 'a-pepper-for-this-test' };
    expect(env.SVC_KEY_CACHE_SIZE).toBe('50000');
    const o = gatewayOptions({ cluster: true }, env);
    expect(o.keyCacheSize).toBe(50_000);
    expect(gatewayOptions({}, {}).keyCacheSize).toBe(DEFAULT_KEY_CACHE_SIZE);
    expect(gatewayOptions({}, { SVC_KEY_CACHE_SIZE: '0' }).keyCacheSize).toBe(0);
  });

  it.each(['-1', '1.5', 'many'])('refuses %s with the setting named', (v) => {
    expect(() => gatewayOptions({}, { SVC_KEY_CACHE_SIZE: v })).toThrow(/SVC_KEY_CACHE_SIZE must be a whole number/);
  });
});
