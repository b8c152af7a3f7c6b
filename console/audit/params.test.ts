import { describe, expect, it } from 'vitest';
import { accountName, clean, outcomeOf } from './record.ts';
import { activityQuery, filterOf, readActivityParams } from './params.ts';
import { DAY_MS } from './trail.ts';

describe('Activity filters from the URL', () => {
  it('reads every filter, and the console-wide scope as account ""', () => {
    const p = readActivityParams({ action: 'key-revoked', person: ' bob ', from: '2026-11-01', to: '2026-11-30', page: '2' }, '*');
    expect(p).toEqual({ scope: '*', action: 'key-revoked', actor: 'bob', from: '2026-11-01', to: '2026-11-30', page: 2 });
    if ('error' in p) throw new Error(p.error);
    // To is a whole UTC day, included.
    expect(filterOf(p)).toEqual({ account: '', action: 'key-revoked', actor: 'bob', from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 30) + DAY_MS });
    expect(activityQuery(p, 3)).toBe('account=*&action=key-revoked&person=bob&from=2026-11-01&to=2026-11-30&page=3');
    expect(filterOf({ ...p, scope: 'demo', action: '', actor: '', from: '', to: '' })).toEqual({ account: 'demo' });
  });

  it.each([
    [{ action: 'drop-table' }, /Action must be one of/],
    [{ from: '2026-02-30' }, /From must be a date/],
    [{ to: 'tomorrow' }, /To must be a date/],
    [{ page: '0' }, /Page must be/],
    [{ page: '1.5' }, /Page must be/],
    [{ person: 'x'.repeat(201) }, /at most 200/],
  ])('refuses %j with a message', (q, message) => {
    const p = readActivityParams(q, 'demo');
    expect('error' in p && p.error).toMatch(message);
  });
});

describe('audit record fields', () => {
  it.each([
    [200, 'success'],
    [303, 'success'],
    [401, 'refused'],
    [403, 'refused'],
    [429, 'refused'],
    [404, 'failed'],
    [409, 'failed'],
    [422, 'failed'],
    [502, 'failed'],
  ])('status %d is %s', (status, outcome) => {
    expect(outcomeOf(status)).toBe(outcome);
  });

  it('keeps a line one line and bounded, and only account names that can be one', () => {
    expect(clean('a\nb\rc\u0000d', 100)).toBe('a b c d');
    expect(clean('x'.repeat(500), 200)).toHaveLength(200);
    expect(clean(undefined, 10)).toBe('');
    expect(accountName('team-a')).toBe('team-a');
    expect(accountName('../x')).toBe('');
    expect(accountName('Team')).toBe('');
    expect(accountName(['demo'])).toBe('');
  });
});
