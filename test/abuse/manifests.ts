// The configuration every abuse test runs on: one Builder account with a key whose limits are known, and routes
// to both fake upstream protocols (the translators run for each pair), an embeddings model and a mock model.
import { account, apiKey, plan, route, type TargetSpec } from '../helpers/manifests.ts';

export const ACCOUNT = 'abuse-acct';
export const KEY_NAME = 'abuse-key';
/** The key's RPM limit: high enough that the fuzz is never rate limited by its own valid calls. */
export const KEY_RPM = 20_000;

/**
 * The response cache is on for the routes that answer, sampling calls included, so the hostile requests also go
 * through the cache (its key and entries must hold nothing but answers: fuzz.test.ts checks Redis after the run).
 */
const CACHED = { cache: { allowSampling: true } };

export interface AbuseConfig {
  docs: object[];
  key: string;
}

export function abuseConfig(upstreams: { openai: string; anthropic: string }, extra: { timeouts?: TargetSpec['timeouts'] } = {}): AbuseConfig {
  const k = apiKey(KEY_NAME, ACCOUNT, { limits: { rpm: KEY_RPM } });
  const t = extra.timeouts ? { timeouts: extra.timeouts } : {};
  return {
    key: k.key,
    docs: [
      plan('abuse-plan', { tier: 2, anthropicEndpoint: true, limits: { rpm: 100_000, tpm: 100_000_000 } }),
      account(ACCOUNT, 'abuse-plan', { trialCreditUsd: 1, credits: [{ id: 'abuse-topup', amountUsd: 10_000 }] }),
      ...k.docs,
      route('chat-o', [{ name: 'o', provider: 'openai', baseUrl: upstreams.openai, upstreamModel: 'gpt-up', ...t }], CACHED),
      route('chat-a', [{ name: 'a', provider: 'anthropic', baseUrl: upstreams.anthropic, upstreamModel: 'claude-up', ...t }], CACHED),
      route('broken', [{ name: 'b', provider: 'openai', baseUrl: upstreams.openai, upstreamModel: 'broken-up', ...t }]),
      route('slow', [{ name: 's', provider: 'openai', baseUrl: upstreams.openai, upstreamModel: 'slow-up', ...t }]),
      route('embed', [{ name: 'e', provider: 'openai', baseUrl: upstreams.openai, upstreamModel: 'embed-up', ...t }], { type: 'embeddings', ...CACHED }),
      route('mock-mini', [{ name: 'm', provider: 'mock' }], CACHED),
      route('text-m', [{ name: 'tm', provider: 'mock' }], { type: 'completions', fim: true, ...CACHED }),
      route('rerank-m', [{ name: 'rm', provider: 'mock' }], { type: 'rerank', pricing: { inputPerMTokUsd: 1.04, perSearchUnitUsd: 0.002 } }),
      route('mod-m', [{ name: 'mm', provider: 'mock' }], { type: 'moderation' }),
    ],
  };
}
