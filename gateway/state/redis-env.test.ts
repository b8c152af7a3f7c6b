// SVC_ADMISSION_LEASES: off unless set to 1, and a readable error for anything else.
import { describe, expect, it } from 'vitest';
import { redisOptionsFromEnv } from './redis-env.ts';

describe('SVC_ADMISSION_LEASES', () => {
  it('is off by default and with 0, on with 1, refused otherwise', () => {
    expect(redisOptionsFromEnv('redis://127.0.0.1:6379', {}).leases).toBeNull();
    expect(redisOptionsFromEnv('redis://127.0.0.1:6379', { SVC_ADMISSION_LEASES: '0' }).leases).toBeNull();
    expect(redisOptionsFromEnv('redis://127.0.0.1:6379', { SVC_ADMISSION_LEASES: '1' }).leases).toEqual({});
    expect(() => redisOptionsFromEnv('redis://127.0.0.1:6379', { SVC_ADMISSION_LEASES: 'yes' })).toThrow('SVC_ADMISSION_LEASES must be 0 or 1, got "yes"');
  });
});
