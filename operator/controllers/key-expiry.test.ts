import { describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../gateway/contract/snapshot.ts';
import { daysLeft, expiringByAccount, expiryView } from './key-expiry.ts';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('expiryView: what the ApiKey status says, and when to look again', () => {
  it.each([
    ['no expiry', null, { expiresAt: null, expired: false, soon: false, recheckMs: null }],
    ['far: look again in an hour at most', NOW + 30 * DAY, { expired: false, soon: false, recheckMs: HOUR }],
    ['turns soon in 10 minutes', NOW + 14 * DAY + 600_000, { expired: false, soon: false, recheckMs: 600_000 }],
    ['exactly 14 days: soon', NOW + 14 * DAY, { expired: false, soon: true, recheckMs: HOUR }],
    ['expires in 5 s: look again then', NOW + 5000, { soon: true, recheckMs: 5000 }],
    ['at the second: expired', NOW, { expiresAt: '2026-11-25T12:00:00Z', expired: true, soon: false, recheckMs: null }],
  ])('%s', (_name, at, expected) => {
    expect(expiryView(at, NOW)).toMatchObject(expected);
  });
});

describe('expiringByAccount: svc_gateway_keys_expiring', () => {
  const rec = (name: string, account: string, over: Partial<KeyRecord>): KeyRecord => ({
    hash: name,
    name,
    display: 'd',
    account,
    monthlyBudgetNano: null,
    rpm: null,
    tpm: null,
    models: null,
    revoked: false,
    ...over,
  });
  it('counts keys within 14 days, not expired, not revoked; every account listed', () => {
    const keys = [
      rec('a', 'acme', { expiresAt: NOW + DAY }),
      rec('b', 'acme', { expiresAt: NOW + 13 * DAY }),
      rec('c', 'acme', { expiresAt: NOW + 15 * DAY }),
      rec('d', 'acme', { expiresAt: NOW - 1 }),
      rec('e', 'acme', { expiresAt: NOW + DAY, revoked: true }),
      rec('f', 'zed', {}),
    ];
    expect(expiringByAccount(keys, ['zed', 'acme', 'empty'], NOW)).toEqual([
      { account: 'acme', keys: 2 },
      { account: 'empty', keys: 0 },
      { account: 'zed', keys: 0 },
    ]);
  });

  it.each([
    [NOW + 9.5 * DAY, 'in 9 days'],
    [NOW + DAY, 'in 1 day'],
    [NOW + 3 * HOUR, 'today'],
  ])('days left until %i: %s', (at, text) => {
    expect(daysLeft(at, NOW)).toBe(text);
  });
});
