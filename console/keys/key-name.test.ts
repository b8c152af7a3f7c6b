import { describe, expect, it } from 'vitest';
import { isKeyName, newKeyNameError } from './key-name.ts';
import { apiKeyObjectName, keyNameOf } from './object-name.ts';

describe('key names', () => {
  it.each([
    ['ci-bot', true, null],
    ['a', true, null],
    ['team.ci-bot', true, 'Use at most'],
    ['beta-key/status', false, 'Use at most'],
    ['../beta-key', false, 'Use at most'],
    ['Bot', false, 'Use at most'],
    ['-bot', false, 'Use at most'],
    ['bot key', false, 'Use at most'],
    ['', false, 'Enter a name.'],
    ['a'.repeat(50), true, null],
    ['a'.repeat(51), true, 'Use at most'],
    ['a'.repeat(254), false, 'Use at most'],
  ])('%s: an action may name it: %s; as a new name: %s', (name, action, error) => {
    expect(isKeyName(name)).toBe(action);
    const e = newKeyNameError(name);
    if (error === null) expect(e).toBeNull();
    else expect(e).toContain(error);
  });
});

describe('ApiKey object names', () => {
  it("are the account's own space: pairs that would collide joined with a hyphen stay apart", () => {
    expect(apiKeyObjectName('alpha', 'beta-key', 0)).toBe('alpha.beta-key');
    expect(apiKeyObjectName('alpha-beta', 'key', 0)).not.toBe(apiKeyObjectName('alpha', 'beta-key', 0));
    expect(apiKeyObjectName('a.b', 'c', 0)).toBe('a.b.c');
    expect(apiKeyObjectName('alpha', 'squat', 1)).toMatch(/^alpha\.squat-[0-9a-f]{8}$/);
    expect(apiKeyObjectName('alpha', 'squat', 1)).not.toBe(apiKeyObjectName('alpha', 'squat', 2));
    expect(apiKeyObjectName('a'.repeat(250), 'key', 1)).toHaveLength(253);
  });

  it('show the typed name, or the object name when there is none (keys made before, or by kubectl)', () => {
    expect(keyNameOf({ metadata: { name: 'alpha.ci' }, spec: { displayName: 'ci' } })).toBe('ci');
    expect(keyNameOf({ metadata: { name: 'ci' }, spec: {} })).toBe('ci');
    expect(keyNameOf({ metadata: { name: 'x' }, spec: { displayName: 'My Key!' } })).toBe('x');
  });
});
