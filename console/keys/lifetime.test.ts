import { describe, expect, it } from 'vitest';
import { ageOf, highlightOf, rotatedKeyStops, successorExpiry } from './lifetime.ts';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const DAY = 86_400_000;

describe('successorExpiry: a rotated key keeps its life, within the policy', () => {
  it.each([
    ['no expiry, no policy', { expiresAt: null, createdAt: NOW - DAY }, null, null],
    ['30-day key: 30 days from now', { expiresAt: NOW + DAY, createdAt: NOW - 29 * DAY }, null, NOW + 30 * DAY],
    ['capped by maxKeyAgeDays', { expiresAt: NOW + DAY, createdAt: NOW - 99 * DAY }, { maxKeyAgeDays: 60, requireExpiry: false }, NOW + 60 * DAY],
    ['policy requires one: its maximum', { expiresAt: null, createdAt: null }, { maxKeyAgeDays: 45, requireExpiry: true }, NOW + 45 * DAY],
    ['policy requires one without maximum: 90 days', { expiresAt: null, createdAt: null }, { requireExpiry: true }, NOW + 90 * DAY],
  ])('%s', (_name, old, policy, expected) => {
    expect(successorExpiry(old, policy, NOW)).toBe(expected);
  });
});

describe("rotatedKeyStops: the earlier of the grace period and the key's expiry", () => {
  it.each([
    [7 * DAY, null, NOW + 7 * DAY],
    [7 * DAY, NOW + 3 * DAY, NOW + 3 * DAY],
    [3600_000, NOW + 3 * DAY, NOW + 3600_000],
  ])('grace %i, expiry %s -> %i', (grace, expiresAt, stops) => {
    expect(rotatedKeyStops(NOW, grace, expiresAt)).toBe(stops);
  });
});

describe('highlightOf and ageOf', () => {
  const iso = (ms: number): string => new Date(ms).toISOString();
  it.each([
    ['fresh', { state: 'Active', expiresAt: null, createdAt: iso(NOW - DAY) }, null],
    ['exactly 90 days old: not yet', { state: 'Active', expiresAt: null, createdAt: iso(NOW - 90 * DAY) }, null],
    ['older than 90 days', { state: 'Active', expiresAt: null, createdAt: iso(NOW - 91 * DAY) }, { kind: 'old', days: 91 }],
    ['expiring within 14 days wins', { state: 'Active', expiresAt: NOW + 14 * DAY, createdAt: iso(NOW - 200 * DAY) }, { kind: 'expiring', days: 14 }],
    ['15 days left', { state: 'Active', expiresAt: NOW + 15 * DAY, createdAt: null }, null],
    ['revoked: nothing to say', { state: 'Revoked', expiresAt: NOW + DAY, createdAt: null }, null],
  ])('%s', (_name, row, expected) => {
    expect(highlightOf(row, NOW)).toEqual(expected);
  });

  it.each([
    [null, '—'],
    [NOW - 30_000, 'just now'],
    [NOW - 2 * 3600_000, '2 hours'],
    [NOW - DAY, '1 day'],
    [NOW - 45 * DAY, '45 days'],
  ])('age of %s: %s', (created, text) => {
    expect(ageOf(created === null ? null : new Date(created).toISOString(), NOW)).toBe(text);
  });
});
