// A logout token's claims (Back-Channel Logout 1.0, 2.6) and what the kept logouts end.
import { describe, expect, it } from 'vitest';
import { LOGOUT_EVENT, logoutMarkOf } from './logout-token.ts';
import { MemoryLogouts } from './logouts.ts';

const base = { iss: 'https://idp', aud: 'c', iat: 1, jti: 'j1', events: { [LOGOUT_EVENT]: {} } };

describe('logoutMarkOf', () => {
  it('gives the sub and sid the token names', () => {
    expect(logoutMarkOf({ ...base, sub: 'alice', sid: 's1' })).toEqual({ sub: 'alice', sid: 's1' });
    expect(logoutMarkOf({ ...base, sid: 's1' })).toEqual({ sid: 's1' });
  });

  it.each([
    [{ ...base, sub: 'a', events: {} }, /no back-channel logout event/],
    [{ ...base, sub: 'a', events: { [LOGOUT_EVENT]: 'yes' } }, /no back-channel logout event/],
    [{ ...base, sub: 'a', nonce: 'n' }, /must not carry a nonce/],
    [{ ...base, sub: 'a', jti: '' }, /no jti/],
    [{ ...base }, /neither a subject/],
  ])('refuses %j', (claims, why) => {
    expect(() => logoutMarkOf(claims)).toThrow(why);
  });
});

describe('MemoryLogouts', () => {
  it('ends the session of a sid; a sub alone ends the sessions begun before it; marks expire', async () => {
    const l = new MemoryLogouts(1000);
    await l.mark({ sub: 'alice', sid: 's1' }, 100);
    expect(await l.ended({ sub: 'alice', sid: 's1', createdAt: 50 })).toBe(true);
    expect(await l.ended({ sub: 'alice', sid: 's2', createdAt: 50 })).toBe(false);
    await l.mark({ sub: 'bob' }, 200);
    expect(await l.ended({ sub: 'bob', sid: 'x', createdAt: 150 })).toBe(true);
    expect(await l.ended({ sub: 'bob', createdAt: 250 })).toBe(false);
    await l.mark({ sub: 'carol' }, 5000);
    expect(await l.ended({ sub: 'alice', sid: 's1', createdAt: 50 })).toBe(false);
  });
});
