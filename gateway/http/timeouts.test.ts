import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, timeoutsFromEnv } from './timeouts.ts';

describe('timeoutsFromEnv', () => {
  it('gives the defaults when nothing is set', () => {
    expect(timeoutsFromEnv({})).toEqual(DEFAULT_TIMEOUTS);
  });

  it('reads each variable, from the smallest value on', () => {
    expect(timeoutsFromEnv({ SVC_HEADERS_TIMEOUT_MS: '100', SVC_REQUEST_TIMEOUT_MS: '2000', SVC_IDLE_TIMEOUT_MS: '9007199254740991' })).toEqual({
      headersMs: 100,
      requestMs: 2000,
      idleMs: 9007199254740991,
    });
  });

  it.each(['0', '99', '-1', '1.5', 'ten', '1e400'])('refuses %j, naming the variable', (v) => {
    expect(() => timeoutsFromEnv({ SVC_REQUEST_TIMEOUT_MS: v })).toThrow(/SVC_REQUEST_TIMEOUT_MS must be a whole number of milliseconds/);
  });
});
