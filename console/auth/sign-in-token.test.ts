import { describe, expect, it } from 'vitest';
import { openToken, sealToken, tokenExpiry } from './sign-in-token.ts';

const jwt = (payload: object): string => ['e30', Buffer.from(JSON.stringify(payload)).toString('base64url'), 'sig'].join('.');

describe('sign-in token', () => {
  it('opens only under the session id it was sealed with, and the sealed form does not contain the token', () => {
    const sealed = sealToken('session-a', 'my-secret-token');
    expect(sealed).not.toContain('my-secret-token');
    expect(openToken('session-a', sealed)).toBe('my-secret-token');
    expect(openToken('session-b', sealed)).toBeNull();
    expect(openToken('session-a', `${sealed}x`)).toBeNull();
    expect(openToken('session-a', 'garbage')).toBeNull();
    expect(sealToken('session-a', 'my-secret-token')).not.toBe(sealed);
  });

  it.each([
    ['a bound token', jwt({ exp: 1_900_000_000, sub: 'system:serviceaccount:ns:sa' }), 1_900_000_000_000],
    ['a JWT without exp', jwt({ sub: 'x' }), null],
    ['a non-numeric exp', jwt({ exp: '1900000000' }), null],
    ['not a JWT', 'static-token', null],
    ['a broken payload', 'a.!!!.c', null],
  ])('reads the expiry of %s', (_what, token, expected) => {
    expect(tokenExpiry(token)).toBe(expected);
  });
});
