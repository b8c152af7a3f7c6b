import { describe, expect, it } from 'vitest';
import { reasonForStreamError } from './classify.ts';

describe('reasonForStreamError', () => {
  it('is upstream_429 for a throttling error first in a stream, in each dialect', () => {
    expect(reasonForStreamError('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}')).toBe('upstream_429');
    expect(reasonForStreamError('{"type":"ThrottlingException","message":"Too many requests"}')).toBe('upstream_429');
    expect(reasonForStreamError('{"type":"error","error":{"type":"throttlingException"}}')).toBe('upstream_429');
    expect(reasonForStreamError('{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota"}}')).toBe('upstream_429');
  });

  it('is upstream_5xx for any other error event', () => {
    expect(reasonForStreamError('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toBe('upstream_5xx');
    expect(reasonForStreamError('{"type":"InternalServerException","message":"boom"}')).toBe('upstream_5xx');
    expect(reasonForStreamError('{"error":{"message":"the text mentions rate_limit_error but is no type"}}')).toBe('upstream_5xx');
  });
});
