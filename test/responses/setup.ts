// One gateway over both fake upstreams for the Responses API tests, with one model per kind of upstream: an
// OpenAI-format one that speaks Chat Completions only (translated), one whose target has responsesApi (passed
// through), and an Anthropic-format one (translated), so a test runs unchanged against each.
import { ANTHROPIC_FAKE_REPLY, startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';

export interface Env {
  gw: TestGateway;
  anthropic: FakeAnthropic;
  openai: FakeUpstream;
  keys: { builder: string; free: string };
  close(): Promise<void>;
}

const fast = { connectMs: 500, firstByteMs: 2_000, idleMs: 2_000, totalMs: 20_000 };

export async function startEnv(): Promise<Env> {
  const [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeUpstream('openai-fake')]);
  const b = basics();
  const gw = await startGateway([
    ...b.docs,
    route('gpt-chat', [{ name: 'chat-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', timeouts: fast }]),
    route('gpt-resp', [{ name: 'resp-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', responsesApi: true, timeouts: fast }]),
    route('claude-test', [{ name: 'anthropic-a', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-upstream', timeouts: fast }]),
    // A Responses target first (weight 1), a Chat-only one second (weight 0): a fallback changes the upstream API.
    route('gpt-mixed', [
      { name: 'mixed-resp', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', responsesApi: true, weight: 1, timeouts: fast },
      { name: 'mixed-chat', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', weight: 0, timeouts: fast },
    ]),
    route('mock-mini', [{ name: 'mock-a', provider: 'mock' }]),
  ]);
  return {
    gw,
    anthropic,
    openai,
    keys: b.keys,
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

/** One kind of upstream, seen the same way by a test. */
export interface Upstream {
  kind: 'chat' | 'responses' | 'anthropic';
  model: string;
  text: string;
  /** Request bodies the upstream received, and their paths. */
  calls(): Array<{ path: string; body: Record<string, unknown> }>;
  replyTools(tools: ToolReply[], text?: string): void;
  replyText(text: string, usage: { input: number; cacheRead: number; output: number }): void;
  /** The next reply is cut after this many events. */
  cut(after: number): void;
  reset(): void;
}

export function upstreams(env: Env): Upstream[] {
  const { anthropic, openai } = env;
  const openaiKind = (kind: 'chat' | 'responses', model: string, text: string): Upstream => ({
    kind,
    model,
    text,
    calls: () => openai.calls.map((c) => ({ path: c.path, body: c.body })),
    replyTools: (tools, t) =>
      openai.enqueue({ kind: 'reply', content: t, toolCalls: tools.map((x) => ({ id: x.id, name: x.name, arguments: JSON.stringify(x.input) })) }),
    replyText: (t, u) =>
      openai.enqueue({ kind: 'reply', content: t, usage: { prompt_tokens: u.input, cached_tokens: u.cacheRead, completion_tokens: u.output } }),
    cut: (after) => openai.enqueue({ kind: 'cut', afterChunks: after }),
    reset: () => {
      openai.calls.length = 0;
      openai.fallback = () => ({ kind: 'reply' });
    },
  });
  return [
    openaiKind('chat', 'gpt-chat', 'Hello from the fake upstream.'),
    openaiKind('responses', 'gpt-resp', 'Hello from the fake Responses upstream.'),
    {
      kind: 'anthropic',
      model: 'claude-test',
      text: ANTHROPIC_FAKE_REPLY,
      calls: () => anthropic.calls.map((c) => ({ path: c.path, body: c.body })),
      replyTools: (tools, text) => anthropic.enqueue({ kind: 'reply', tools, text }),
      replyText: (text, u) =>
        anthropic.enqueue({
          kind: 'reply',
          text,
          usage: { input_tokens: u.input - u.cacheRead, cache_read_input_tokens: u.cacheRead, output_tokens: u.output },
        }),
      cut: (after) => anthropic.enqueue({ kind: 'cut', afterEvents: after }),
      reset: () => {
        anthropic.calls.length = 0;
        anthropic.fallback = () => ({ kind: 'reply' });
      },
    },
  ];
}
