// The URL shapes of Azure OpenAI targets and the token cache's refresh rules (the end-to-end tests in test/clouds/
// run the real credential libraries against a fake Entra ID).
import { describe, expect, it } from 'vitest';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { TokenCache, type AccessTokenLike } from './token-cache.ts';
import { azureUrl } from './urls.ts';

const target = (extra: Partial<CompiledTarget>): CompiledTarget => ({
  name: 'az',
  provider: 'azure-openai',
  baseUrl: 'https://res.openai.azure.com',
  upstreamModel: 'gpt-4o prod/1',
  credential: { kind: 'none' },
  weight: 1,
  timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, totalMs: 1 },
  mock: null,
  ...extra,
});

describe('azureUrl', () => {
  it('the v1 API: /openai/v1/{operation}, the deployment left to the body', () => {
    expect(azureUrl(target({}), 'chat')).toBe('https://res.openai.azure.com/openai/v1/chat/completions');
    expect(azureUrl(target({}), 'embeddings')).toBe('https://res.openai.azure.com/openai/v1/embeddings');
    expect(azureUrl(target({}), 'responses')).toBe('https://res.openai.azure.com/openai/v1/responses');
    expect(azureUrl(target({ baseUrl: 'https://res.openai.azure.com/openai/v1' }), 'chat')).toBe('https://res.openai.azure.com/openai/v1/chat/completions');
  });

  it('the dated API: the deployment URL-encoded in the path, the api-version in the query; no Responses', () => {
    const t = target({ apiVersion: '2024-10-21' });
    expect(azureUrl(t, 'chat')).toBe('https://res.openai.azure.com/openai/deployments/gpt-4o%20prod%2F1/chat/completions?api-version=2024-10-21');
    expect(azureUrl(t, 'embeddings')).toBe('https://res.openai.azure.com/openai/deployments/gpt-4o%20prod%2F1/embeddings?api-version=2024-10-21');
    expect(() => azureUrl(t, 'responses')).toThrow(/cannot serve responses/);
    expect(() => azureUrl(target({}), 'messages')).toThrow(/cannot serve messages/);
  });
});

describe('TokenCache', () => {
  function setup(lifeMs: number, refreshAfterMs?: number) {
    let now = 1_000_000;
    let n = 0;
    const pending: Array<() => void> = [];
    const fetchToken = (): Promise<AccessTokenLike> => {
      n++;
      const at = { token: `t${n}`, expiresOnTimestamp: now + lifeMs, ...(refreshAfterMs ? { refreshAfterTimestamp: now + refreshAfterMs } : {}) };
      return new Promise((r) => pending.push(() => r(at)));
    };
    const cache = new TokenCache(fetchToken, () => now);
    return {
      cache,
      fetches: () => n,
      settle: async () => {
        while (pending.length) pending.shift()?.();
        await new Promise((r) => setImmediate(r));
      },
      advance: (ms: number) => (now += ms),
    };
  }

  it('shares one fetch among concurrent callers, then serves from the cache', async () => {
    const s = setup(3_600_000);
    const all = Promise.all([s.cache.get(), s.cache.get(), s.cache.get()]);
    await s.settle();
    expect(await all).toEqual(['t1', 't1', 't1']);
    expect(await s.cache.get()).toBe('t1');
    expect(s.fetches()).toBe(1);
  });

  it('refreshes in the background past the refresh point, keeps the old token meanwhile, and once only', async () => {
    const s = setup(3_600_000);
    const first = s.cache.get();
    await s.settle();
    await first;
    s.advance(3_600_000 - 4 * 60_000); // within 5 minutes of expiry
    expect(await s.cache.get()).toBe('t1');
    expect(await s.cache.get()).toBe('t1');
    expect(s.fetches()).toBe(2);
    await s.settle();
    expect(await s.cache.get()).toBe('t2');
    expect(s.fetches()).toBe(2);
  });

  it("follows the issuer's refresh_in, and waits for a new token once the held one is about to expire", async () => {
    const s = setup(60_000, 10_000);
    const first = s.cache.get();
    await s.settle();
    await first;
    s.advance(9_000);
    expect(await s.cache.get()).toBe('t1');
    expect(s.fetches()).toBe(1);
    s.advance(2_000);
    expect(await s.cache.get()).toBe('t1');
    expect(s.fetches()).toBe(2);
    await s.settle();
    s.advance(60_000);
    const waited = s.cache.get();
    await s.settle();
    expect(await waited).toBe('t3');
  });

  it('a failed fetch reaches the callers, and the next call tries again', async () => {
    let n = 0;
    const cache = new TokenCache(() =>
      ++n === 1 ? Promise.reject(new Error('no')) : Promise.resolve({ token: 'ok', expiresOnTimestamp: Date.now() + 3_600_000 }),
    );
    await expect(cache.get()).rejects.toThrow('no');
    expect(await cache.get()).toBe('ok');
  });

  it('gives up a fetch that never answers, so the next call tries again', async () => {
    let n = 0;
    const cache = new TokenCache(
      () => (++n === 1 ? new Promise<AccessTokenLike>(() => undefined) : Promise.resolve({ token: 'ok', expiresOnTimestamp: Date.now() + 3_600_000 })),
      Date.now,
      20,
    );
    await expect(cache.get()).rejects.toThrow('no token within 20 ms');
    expect(await cache.get()).toBe('ok');
  });
});
