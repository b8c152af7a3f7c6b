// The URL shapes of Azure OpenAI targets and the token cache's refresh rules (the end-to-end tests in test/clouds/
// run the real credential libraries against a fake Entra ID).
import { describe, expect, it } from 'vitest';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { FIRST_HOLD_MS } from '../credential-backoff.ts';
import { TokenCache, type AccessTokenLike } from '../token-cache.ts';
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

  it('a failed fetch reaches the callers; calls during the back-off get it without a fetch, the next call after tries again', async () => {
    let n = 0;
    let now = 1_000_000;
    const cache = new TokenCache(
      () => (++n === 1 ? Promise.reject(new Error('no')) : Promise.resolve({ token: 'ok', expiresOnTimestamp: now + 3_600_000 })),
      () => now,
    );
    await expect(cache.get()).rejects.toThrow('no');
    now += FIRST_HOLD_MS - 1;
    await expect(cache.get()).rejects.toThrow('no');
    expect(n).toBe(1);
    now += 1;
    expect(await cache.get()).toBe('ok');
    expect(n).toBe(2);
  });

  it('gives up a fetch that never answers, so a call after the back-off tries again', async () => {
    let n = 0;
    let now = 1_000_000;
    const cache = new TokenCache(
      () => (++n === 1 ? new Promise<AccessTokenLike>(() => undefined) : Promise.resolve({ token: 'ok', expiresOnTimestamp: now + 3_600_000 })),
      () => now,
      20,
    );
    await expect(cache.get()).rejects.toThrow('no token within 20 ms');
    now += FIRST_HOLD_MS;
    expect(await cache.get()).toBe('ok');
  });
});
