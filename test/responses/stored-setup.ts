// A gateway for the stored-Responses tests: the three kinds of upstream of setup.ts, a clock the test moves, two
// accounts (acme with three keys: builder, a second one, a revoked one and a tight budget; hobby with one), and
// optionally a small per-account bound for stored responses.
import { ANTHROPIC_FAKE_REPLY, startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { apiKey, basics, route } from '../helpers/manifests.ts';
import { DEFAULT_STORED_RESPONSES, type ResponseStore } from '../../gateway/stored-responses/types.ts';

export const IN = 1040; // nano-USD per input token (route()'s 1.04 USD per million)
export const OUT = 2080;
export const MAX_OUT = 50;

export interface StoredEnv {
  gw: TestGateway;
  anthropic: FakeAnthropic;
  openai: FakeUpstream;
  keys: { builder: string; second: string; free: string; revoked: string; tight: string };
  clock: { now: number };
  close(): Promise<void>;
}

export const KINDS = [
  { kind: 'chat', model: 'gpt-chat', text: 'Hello from the fake upstream.' },
  { kind: 'responses', model: 'gpt-resp', text: 'Hello from the fake Responses upstream.' },
  { kind: 'anthropic', model: 'claude-test', text: ANTHROPIC_FAKE_REPLY },
] as const;

const fast = { connectMs: 500, firstByteMs: 5_000, idleMs: 5_000, totalMs: 20_000 };

/** `tightBudgetNano`: the monthly budget of the `tight` key; `accountBytes`: the per-account bound; `store`: default memory. */
export async function startStoredEnv(o: { tightBudgetNano?: number; accountBytes?: number; store?: ResponseStore } = {}): Promise<StoredEnv> {
  const [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeUpstream('openai-fake')]);
  const b = basics();
  const second = apiKey('second-key', 'acme');
  const revoked = apiKey('revoked-key', 'acme', { revoked: true });
  const tight = apiKey('tight-key', 'acme', { monthlyBudgetUsd: (o.tightBudgetNano ?? 1e9) / 1e9 });
  const clock = { now: Date.now() };
  const gw = await startGateway(
    [
      ...b.docs,
      ...second.docs,
      ...revoked.docs,
      ...tight.docs,
      route('gpt-chat', [{ name: 'chat-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', timeouts: fast }]),
      route('gpt-resp', [{ name: 'resp-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', responsesApi: true, timeouts: fast }]),
      route('claude-test', [{ name: 'anthropic-a', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-upstream', timeouts: fast }]),
    ],
    {
      now: () => clock.now,
      responses: { store: o.store, settings: { ...DEFAULT_STORED_RESPONSES, accountBytes: o.accountBytes ?? DEFAULT_STORED_RESPONSES.accountBytes } },
    },
  );
  return {
    gw,
    anthropic,
    openai,
    clock,
    keys: { builder: b.keys.builder, second: second.key, free: b.keys.free, revoked: revoked.key, tight: tight.key },
    close: async () => {
      await gw.close();
      await Promise.all([anthropic.close(), openai.close()]);
    },
  };
}

/** The next answer of this kind of upstream reports this usage. */
export function replyUsage(env: StoredEnv, kind: (typeof KINDS)[number]['kind'], text: string, input: number, output: number): void {
  if (kind === 'anthropic') env.anthropic.enqueue({ kind: 'reply', text, usage: { input_tokens: input, output_tokens: output } });
  else env.openai.enqueue({ kind: 'reply', content: text, usage: { prompt_tokens: input, completion_tokens: output } });
}

/** Request bodies the upstream of this kind received. */
export function upstreamBodies(env: StoredEnv, kind: (typeof KINDS)[number]['kind']): Array<Record<string, unknown>> {
  return (kind === 'anthropic' ? env.anthropic.calls : env.openai.calls).map((c) => c.body);
}
