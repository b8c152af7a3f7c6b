import { describe, expect, it } from 'vitest';
import { authSecrets, REDACTED, Scrubber } from './scrub.ts';

const KEY = 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z';

describe('Scrubber', () => {
  it.each([
    ['the whole key', `quota error for key ${KEY}`, `quota error for key ${REDACTED}`],
    ['a 13-character prefix', `Incorrect API key provided: ${KEY.slice(0, 13)}***`, `Incorrect API key provided: ${REDACTED}***`],
    ['first and last characters', `key ${KEY.slice(0, 10)}****${KEY.slice(-8)} refused`, `key ${REDACTED}****${REDACTED} refused`],
    ['an 8-character piece inside a word', `xx${KEY.slice(12, 20)}yy`, `xx${REDACTED}yy`],
    ['twice, JSON-escaped around it', `{"message":"${KEY} and ${KEY}"}`, `{"message":"${REDACTED} and ${REDACTED}"}`],
    ['a 7-character piece stays', `key ${KEY.slice(0, 7)}…`, `key ${KEY.slice(0, 7)}…`],
    ['text without it', 'The upstream is overloaded.', 'The upstream is overloaded.'],
  ])('%s', (_what, text, scrubbed) => {
    const out = new Scrubber([KEY]).scrub(text);
    expect(out).toBe(scrubbed);
    for (let i = 0; i + 8 <= KEY.length; i++) expect(out).not.toContain(KEY.slice(i, i + 8));
  });

  it('redacts short secrets whole only', () => {
    expect(new Scrubber(['abcde']).scrub('x abcde y abcd')).toBe(`x ${REDACTED} y abcd`);
  });
});

describe('authSecrets', () => {
  it('takes bearer tokens, key headers, session tokens and the SigV4 key id and signature, not the rest', () => {
    expect(
      authSecrets({
        authorization: 'AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE123/20261127/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=0a1b2c3d',
        'x-amz-security-token': 'FwoGZXIvYXdzEXAMPLE',
      }).sort(),
    ).toEqual(['0a1b2c3d', 'AKIAEXAMPLE123', 'FwoGZXIvYXdzEXAMPLE']);
    expect(authSecrets({ authorization: 'Bearer ya29.token', 'x-goog-api-key': 'AIzaKey', 'content-type': 'application/json' }).sort()).toEqual([
      'AIzaKey',
      'ya29.token',
    ]);
  });
});
