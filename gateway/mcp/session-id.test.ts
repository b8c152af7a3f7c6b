import { describe, expect, it } from 'vitest';
import { SessionSealer } from './session-id.ts';

const session = { servers: { github: { id: 'upstream-session-1', version: '2025-06-18' }, docs: { id: null, version: null } } };

describe('SessionSealer', () => {
  it('opens what it sealed, for the same key, on another replica with the same pepper', () => {
    const id = new SessionSealer('pepper').seal(session, 'hash-a');
    expect(new SessionSealer('pepper').open(id, 'hash-a')).toEqual(session);
  });

  it('hides the upstream session ids', () => {
    expect(new SessionSealer('pepper').seal(session, 'hash-a')).not.toContain('upstream-session-1');
  });

  it.each<[string, (id: string) => [string, string, string]]>([
    ['another key', (id) => ['pepper', id, 'hash-b']],
    ['another pepper', (id) => ['other', id, 'hash-a']],
    ['an altered id', (id) => ['pepper', `${id.slice(0, -2)}${id.endsWith('AA') ? 'BB' : 'AA'}`, 'hash-a']],
    ['a truncated id', (id) => ['pepper', id.slice(0, 20), 'hash-a']],
    ['a foreign id', () => ['pepper', 'a1b2c3', 'hash-a']],
    ['a huge id', () => ['pepper', `svcmcp1.${'A'.repeat(10_000)}`, 'hash-a']],
  ])('opens nothing with %s', (_n, change) => {
    const [pepper, id, hash] = change(new SessionSealer('pepper').seal(session, 'hash-a'));
    expect(new SessionSealer(pepper).open(id, hash)).toBeNull();
  });
});
