import { describe, expect, it } from 'vitest';
import { principalOf } from './identity.ts';

const S = { usernameClaim: 'email', groupsClaim: 'groups', usernamePrefix: 'oidc:', groupsPrefix: 'oidc:' };

describe('the person an ID token names', () => {
  it('takes the user name and groups from the configured claims, each with its prefix, as the API server would', () => {
    expect(principalOf({ sub: 's1', email: 'a@example.com', email_verified: true, groups: ['team-a', 'ops'] }, S)).toEqual({
      kind: 'user',
      username: 'oidc:a@example.com',
      uid: '',
      groups: ['oidc:team-a', 'oidc:ops'],
      extra: {},
    });
  });

  it('reads a single group given as a string, and ignores what is not a group name', () => {
    const p = principalOf({ sub: 's1', email: 'a@example.com', groups: 'team-a' }, S);
    expect(p.kind === 'user' && p.groups).toEqual(['oidc:team-a']);
    const q = principalOf({ sub: 's1', email: 'a@example.com', groups: [1, '', null, 'x'] }, S);
    expect(q.kind === 'user' && q.groups).toEqual(['oidc:x']);
  });

  it('refuses a token without the user name claim, and an email the provider marks unverified', () => {
    expect(() => principalOf({ sub: 's1' }, S)).toThrow(/no "email" claim/);
    expect(() => principalOf({ sub: 's1', email: 'a@example.com', email_verified: false }, S)).toThrow(/not verified/);
  });
});
