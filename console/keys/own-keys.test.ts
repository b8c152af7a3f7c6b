import { describe, expect, it } from 'vitest';
import type { KeyRow } from './backend.ts';
import { mayActOn, mayCreate, ownedUnrevoked, visibleRows } from './own-keys.ts';

const row = (name: string, createdBy: string | null, state: KeyRow['state'] = 'Active') => ({ name, createdBy, state }) as KeyRow;
const ROWS = [row('a', 'ann'), row('b', 'bob'), row('c', null), row('d', 'bob', 'Revoked')];

describe('self-service keys', () => {
  it('list only one’s own keys with create-own-keys, one’s own first with manage-keys', () => {
    expect(visibleRows({ manage: false, own: true }, 'bob', ROWS).map((r) => r.name)).toEqual(['b', 'd']);
    expect(visibleRows({ manage: true, own: false }, 'bob', ROWS).map((r) => r.name)).toEqual(['b', 'd', 'a', 'c']);
  });

  it('act on one’s own keys only, unless managing the account; count only unrevoked ones against the limit', () => {
    expect(mayActOn({ manage: false, own: true }, 'bob', row('b', 'bob'))).toBe(true);
    expect(mayActOn({ manage: false, own: true }, 'bob', row('a', 'ann'))).toBe(false);
    expect(mayActOn({ manage: false, own: true }, 'bob', row('c', null))).toBe(false);
    expect(mayActOn({ manage: true, own: false }, 'bob', row('a', 'ann'))).toBe(true);
    expect(mayActOn({ manage: false, own: false }, 'bob', row('b', 'bob'))).toBe(false);
    expect(mayCreate({ manage: false, own: false })).toBe(false);
    expect(ownedUnrevoked('bob', ROWS)).toBe(1);
  });
});
