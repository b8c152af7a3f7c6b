// One gateway over both fake upstreams (Anthropic format and OpenAI format) for the Anthropic API tests,
// with an adapter so a test can run against either upstream unchanged.
import { ANTHROPIC_FAKE_REPLY, startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { apiKey, basics, route, secret } from '../helpers/manifests.ts';

export const OPENAI_FAKE_REPLY = 'Hello from the fake upstream.';
export const UPSTREAM_SECRET = 'sk-ant-upstream-credential-0123';

export interface Env {
  gw: TestGateway;
  anthropic: FakeAnthropic;
  openai: FakeUpstream;
  keys: { builder: string; free: string; revoked: string };
  close(): Promise<void>;
}

const fast = { connectMs: 500, firstByteMs: 400, idleMs: 400, totalMs: 10_000 };

export async function startEnv(): Promise<Env> {
  const [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeUpstream('openai-fake')]);
  const b = basics();
  const revoked = apiKey('gone-key', 'acme', { revoked: true });
  const gw = await startGateway([
    ...b.docs,
    ...revoked.docs,
    secret('anthropic-cred', { key: UPSTREAM_SECRET }),
    route('claude-test', [
      {
        name: 'anthropic-a',
        provider: 'anthropic',
        baseUrl: anthropic.baseUrl,
        upstreamModel: 'claude-upstream',
        credentials: { secretKeyRef: { name: 'anthropic-cred', key: 'key' } },
        timeouts: fast,
      },
    ]),
    route('gpt-test', [{ name: 'openai-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', timeouts: fast }], {
      maxOutputTokens: 777,
    }),
    route('mock-mini', [{ name: 'mock-a', provider: 'mock' }]),
    // An Anthropic target first (weight 1) and an OpenAI one second (weight 0): a fallback crosses protocols.
    route('mixed', [
      { name: 'mixed-anthropic', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-upstream', weight: 1, timeouts: fast },
      { name: 'mixed-openai', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', weight: 0, timeouts: fast },
    ]),
    route('embed-test', [{ name: 'e', provider: 'openai', baseUrl: openai.baseUrl }], { type: 'embeddings' }),
  ]);
  return {
    gw,
    anthropic,
    openai,
    keys: { ...b.keys, revoked: revoked.key },
    close: async () => {
      await gw.close();
      await Promise.all([anthropic.close(), openai.close()]);
    },
  };
}

export interface ToolReply {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** Either fake, seen the same way by a test. */
export interface Upstream {
  kind: 'anthropic' | 'openai';
  model: string;
  text: string;
  bodies(): Array<Record<string, unknown>>;
  headers(): Array<Record<string, string | string[] | undefined>>;
  /** The next reply: the given tool calls (and optional text). */
  replyTools(tools: ToolReply[], text?: string): void;
  /** The next reply: this text, with this usage (cache reads included in input). */
  replyText(text: string, usage: { input: number; cacheRead: number; output: number }): void;
  reset(): void;
}

export function upstreams(env: Env): Upstream[] {
  const { anthropic, openai } = env;
  return [
    {
      kind: 'anthropic',
      model: 'claude-test',
      text: ANTHROPIC_FAKE_REPLY,
      bodies: () => anthropic.calls.map((c) => c.body),
      headers: () => anthropic.calls.map((c) => c.headers),
      replyTools: (tools, text) => anthropic.enqueue({ kind: 'reply', tools, text }),
      replyText: (text, u) =>
        anthropic.enqueue({
          kind: 'reply',
          text,
          usage: { input_tokens: u.input - u.cacheRead, cache_read_input_tokens: u.cacheRead, output_tokens: u.output },
        }),
      reset: () => {
        anthropic.calls.length = 0;
        anthropic.fallback = () => ({ kind: 'reply' });
      },
    },
    {
      kind: 'openai',
      model: 'gpt-test',
      text: OPENAI_FAKE_REPLY,
      bodies: () => openai.calls.map((c) => c.body),
      headers: () => openai.calls.map((c) => c.headers),
      replyTools: (tools, text) =>
        openai.enqueue({ kind: 'reply', content: text, toolCalls: tools.map((t) => ({ id: t.id, name: t.name, arguments: JSON.stringify(t.input) })) }),
      replyText: (text, u) =>
        openai.enqueue({ kind: 'reply', content: text, usage: { prompt_tokens: u.input, cached_tokens: u.cacheRead, completion_tokens: u.output } }),
      reset: () => {
        openai.calls.length = 0;
        openai.fallback = () => ({ kind: 'reply' });
      },
    },
  ];
}
