import { describe, expect, it } from 'vitest';
import { ERRORS, errorBody, type ErrorCode } from './catalog.ts';

describe('error catalog', () => {
  it('gives each code a 4xx/5xx status and both dialect shapes', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) {
      const { status } = ERRORS[code];
      expect(status).toBeGreaterThanOrEqual(400);
      expect(errorBody('openai', code, 'm')).toMatchObject({ error: { message: 'm', code } });
      expect(errorBody('anthropic', code, 'm')).toMatchObject({ type: 'error', error: { message: 'm' } });
    }
  });

  it('never answers budget or balance refusals with 429 (SDKs retry 429)', () => {
    expect(ERRORS.budget_exceeded.status).toBe(402);
    expect(ERRORS.insufficient_balance.status).toBe(402);
  });

  it('uses the Anthropic error types the SDK maps', () => {
    expect(errorBody('anthropic', 'key_revoked', 'x')).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'x' } });
    expect(errorBody('anthropic', 'endpoint_not_allowed', 'x')).toMatchObject({ error: { type: 'permission_error' } });
  });
});
