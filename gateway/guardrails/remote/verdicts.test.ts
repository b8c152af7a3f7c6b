// The pure parts of the remote checks: a webhook's answer and Bedrock's ApplyGuardrail answer read as verdicts, and a
// Guardrail whose Secret is missing compiled to a check that fails at once (its failure mode decides).
import { describe, expect, it } from 'vitest';
import { compileRemoteChecks } from '../../contract/compile-guardrail-remote.ts';
import { guardrailCheck } from '../../../crds/schema/index.ts';
import { verdictOf as bedrockVerdict } from './bedrock.ts';
import { runRemoteStage } from './run-stage.ts';
import { RemoteFailure } from './types.ts';
import { verdictOf as webhookVerdict } from './webhook.ts';

const texts = ['call Falcon-7 now', 'second'];

describe('webhook answers', () => {
  it.each([
    [{ action: 'allow' }, { action: 'allow' }],
    [{ action: 'block' }, { action: 'block', kinds: ['webhook'] }],
    [
      { action: 'block', categories: ['Internal Policy', 7, 'x'.repeat(80)] },
      { action: 'block', kinds: ['internal-policy', 'x'.repeat(40)] },
    ],
    [
      { action: 'mask', replacements: [{ index: 0, start: 5, end: 13, replacement: '[P]' }] },
      { action: 'mask', kinds: ['webhook'], texts: new Map([[0, 'call [P] now']]) },
    ],
  ])('reads %j', (answer, verdict) => {
    expect(webhookVerdict(answer, texts)).toEqual(verdict);
  });

  it.each([
    ['not an object', []],
    ['no action', { ok: true }],
    ['an unknown action', { action: 'maybe' }],
    ['a mask without replacements', { action: 'mask' }],
    ['a replacement past the text', { action: 'mask', replacements: [{ index: 0, start: 5, end: 99, replacement: '' }] }],
    ['a replacement of a text not sent', { action: 'mask', replacements: [{ index: 2, start: 0, end: 1, replacement: '' }] }],
    [
      'overlapping replacements',
      {
        action: 'mask',
        replacements: [
          { index: 0, start: 0, end: 6, replacement: '' },
          { index: 0, start: 5, end: 8, replacement: '' },
        ],
      },
    ],
  ])('refuses %s as a bad answer', (_, answer) => {
    expect(() => webhookVerdict(answer, texts)).toThrow(RemoteFailure);
  });
});

describe('ApplyGuardrail answers', () => {
  const pii = { sensitiveInformationPolicy: { piiEntities: [{ match: 'a@b.c', type: 'EMAIL', action: 'ANONYMIZED' }] } };
  it('reads NONE as allow, a blocked policy as a block, anonymized only as a mask with its outputs', () => {
    expect(bedrockVerdict({ action: 'NONE', outputs: [] }, 1)).toEqual({ action: 'allow' });
    const topic = { topicPolicy: { topics: [{ name: 'Investment', type: 'DENY', action: 'BLOCKED' }] } };
    expect(bedrockVerdict({ action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'Sorry.' }], assessments: [topic] }, 1)).toEqual({
      action: 'block',
      kinds: ['topic:investment'],
    });
    expect(bedrockVerdict({ action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'mail {EMAIL}' }], assessments: [pii] }, 1)).toEqual({
      action: 'mask',
      kinds: ['sensitiveinformation:email'],
      texts: new Map([[0, 'mail {EMAIL}']]),
    });
  });

  it('blocks an anonymization whose outputs do not map one to one onto the texts sent, and names no custom word', () => {
    expect(bedrockVerdict({ action: 'GUARDRAIL_INTERVENED', outputs: [{ text: 'x' }], assessments: [pii] }, 2).action).toBe('block');
    const word = { wordPolicy: { customWords: [{ match: 'secret-codename', action: 'BLOCKED' }] } };
    expect(bedrockVerdict({ action: 'GUARDRAIL_INTERVENED', outputs: [], assessments: [word] }, 1)).toEqual({ action: 'block', kinds: ['word:word'] });
    expect(() => bedrockVerdict({ outputs: [] }, 1)).toThrow(RemoteFailure);
  });
});

describe('a check whose Secret is missing', () => {
  it('is compiled with no credential and fails at once: closed refuses, open records', async () => {
    const checks = [
      guardrailCheck.parse({ action: 'block', webhook: { url: 'http://127.0.0.1:9/x', credentials: { secretKeyRef: { name: 'gone', key: 'k' } } } }),
    ];
    const { remote, missing } = compileRemoteChecks(checks, new Map(), ' in namespace team-a');
    expect(missing).toBe('Secret gone does not exist in namespace team-a');
    expect(remote[0]).toMatchObject({ credential: { kind: 'none' }, credentialMissing: true });
    const place = { path: 'messages[0].content', get: () => 'hello', set: () => {} };
    const meta = { endpoint: 'chat.completions', dialect: 'openai', model: 'm', account: 'a', apiKey: 'k' };
    const closed = await runRemoteStage([{ guardrail: 'g', check: remote[0]! }], [place], 'request', { meta, signal: new AbortController().signal });
    expect(closed.blocked?.message).toBe('The request was refused: guardrail g is unavailable (check webhook: credential) and fails closed.');
    const open = await runRemoteStage([{ guardrail: 'g', check: { ...remote[0]!, failure: 'open' } }], [place], 'request', {
      meta,
      signal: new AbortController().signal,
    });
    expect(open.blocked).toBeNull();
    expect(open.facts).toEqual([{ guardrail: 'g', check: 'webhook', action: 'log', stage: 'request', kind: 'unavailable', count: 1 }]);
    expect(open.costNano).toBe(0);
  });
});
