import { describe, expect, it } from 'vitest';
import { redact } from './redact.ts';

describe('the redactor of captured prompts and completions', () => {
  const cases: Array<[string, string, string]> = [
    ['an OpenAI key', 'my key is sk-proj-AbCdEf0123456789xyzXYZ_-99 ok', 'my key is [REDACTED] ok'],
    ['an Anthropic key', 'use sk-ant-api03-AAAAbbbbCCCCdddd0000-1111 please', 'use [REDACTED] please'],
    ['a gateway key', 'sk-svc-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d', '[REDACTED]'],
    ['a bearer token', 'Authorization: Bearer abc.DEF-123_456~789', 'Authorization: Bearer [REDACTED]'],
    ['an AWS access key id', 'AKIAIOSFODNN7EXAMPLE is mine', '[REDACTED] is mine'],
    ['an AWS secret assignment', 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key = [REDACTED]'],
    ['a Google API key', 'key=AIzaSyA1234567890abcdefghijklmnopqrstu', 'key=[REDACTED]'],
    ['a GitHub token', 'ghp_0123456789abcdefghijABCDEFGHIJ012345', '[REDACTED]'],
    ['a Slack token', 'xoxb-1234567890-abcdefghij', '[REDACTED]'],
    ['a JWT', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'token [REDACTED]'],
    ['a JSON password field', '{"password": "hunter22", "user": "bob"}', '{"password": "[REDACTED]", "user": "bob"}'],
    ['an api_key assignment', 'api_key: 9f8e7d6c5b4a', 'api_key: [REDACTED]'],
    ['a private key block', 'x -----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- y', 'x [REDACTED] y'],
  ];
  it.each(cases)('replaces %s', (_what, input, want) => {
    expect(redact(input)).toBe(want);
  });

  it('leaves ordinary text alone', () => {
    for (const text of ['What is the capital of France?', 'The sky is blue; ask for a skeleton key.', 'Use sk- as a prefix', 'pass the word around'])
      expect(redact(text)).toBe(text);
  });
});
