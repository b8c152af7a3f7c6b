import { describe, expect, it } from 'vitest';
import { persistenceFindings } from './redis-persistence.ts';

describe('persistenceFindings', () => {
  it.each([
    [{ appendonly: 'yes', 'maxmemory-policy': 'noeviction' }, []],
    [{ appendonly: 'yes', 'maxmemory-policy': 'volatile-lru' }, []],
    [{ appendonly: 'no', 'maxmemory-policy': 'noeviction' }, ['appendonly']],
    [{ appendonly: 'yes', 'maxmemory-policy': 'allkeys-lru' }, ['maxmemory-policy']],
    [{ appendonly: 'no', 'maxmemory-policy': 'allkeys-random' }, ['appendonly', 'maxmemory-policy']],
    [{}, []],
  ])('%j -> %j', (config, settings) => {
    expect(persistenceFindings(config).map((f) => f.setting)).toEqual(settings);
  });
});
