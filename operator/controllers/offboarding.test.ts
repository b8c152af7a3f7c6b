// Which owners the offboarding check asks about: unrevoked keys made for a person, of Accounts with revokeOnOffboard,
// one question per account, user and recorded groups (order of groups does not matter).
import { describe, expect, it } from 'vitest';
import type { CustomObject } from '../kube/clients.ts';
import { ownersToCheck } from './offboarding.ts';

const account = (name: string, revokeOnOffboard?: boolean): CustomObject => ({
  metadata: { name },
  spec: { planRef: 'p', ...(revokeOnOffboard === undefined ? {} : { selfService: { revokeOnOffboard } }) },
});

function key(name: string, accountRef: string, annotations: Record<string, string>, revoked = false): CustomObject {
  return { metadata: { name, annotations }, spec: { accountRef, revoked } };
}

const by = (user: string, groups?: unknown): Record<string, string> => ({
  'gateway.svc.dev/created-by': user,
  ...(groups === undefined ? {} : { 'gateway.svc.dev/created-by-groups': typeof groups === 'string' ? groups : JSON.stringify(groups) }),
});

describe('ownersToCheck', () => {
  it('groups the keys per account, user and recorded groups; only accounts with revokeOnOffboard', () => {
    const owners = ownersToCheck(
      [account('on', true), account('off', false), account('unset')],
      [
        key('a1', 'on', by('alice', ['g2', 'g1'])),
        key('a2', 'on', by('alice', ['g1', 'g2'])),
        key('a3', 'on', by('alice', ['g3'])),
        key('b1', 'on', by('bob')),
        key('c1', 'off', by('carol', ['g1'])),
        key('c2', 'unset', by('carol', ['g1'])),
      ],
    );
    expect(owners).toEqual([
      { account: 'on', user: 'alice', groups: ['g1', 'g2'], keys: ['a1', 'a2'] },
      { account: 'on', user: 'alice', groups: ['g3'], keys: ['a3'] },
      { account: 'on', user: 'bob', groups: [], keys: ['b1'] },
    ]);
  });

  it('leaves out revoked keys, keys without an owner (kubectl), the admin token and a key of an unknown account', () => {
    const owners = ownersToCheck(
      [account('on', true)],
      [key('r', 'on', by('alice'), true), key('k', 'on', {}), key('adm', 'on', by('admin')), key('x', 'gone', by('alice'))],
    );
    expect(owners).toEqual([]);
  });

  it('reads a damaged groups annotation as no groups (the review then asks about the user alone)', () => {
    const owners = ownersToCheck([account('on', true)], [key('a', 'on', by('alice', '{not json')), key('b', 'on', by('bob', [1, 'g']))]);
    expect(owners).toEqual([
      { account: 'on', user: 'alice', groups: [], keys: ['a'] },
      { account: 'on', user: 'bob', groups: ['g'], keys: ['b'] },
    ]);
  });
});
