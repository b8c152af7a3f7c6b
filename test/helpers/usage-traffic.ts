// Mixed traffic for the usage acceptance tests: successes (streamed and not), fallbacks to another target and to
// another model, upstream errors, refused calls, streams cut by the upstream, and client aborts, on fake upstreams
// that count the tokens they served. The kind of call is written in its message, so the fakes know what to do.
import type { Behavior, FakeUpstream, RecordedCall } from '../fakes/upstream.ts';
import { account, apiKey, plan, route } from './manifests.ts';

export type Kind = 'ok' | 'ok-stream' | 'fb-target' | 'fb-model' | 'upstream-error' | 'bad-request' | 'cut' | 'abort' | 'rate-limited';
export const KINDS: Kind[] = ['ok', 'ok-stream', 'fb-target', 'fb-model', 'upstream-error', 'bad-request', 'cut', 'abort', 'ok', 'ok-stream'];
const TASKS = ['summarize', 'translate', null] as const;

export interface Upstreams {
  primary: FakeUpstream;
  secondary: FakeUpstream;
  backup: FakeUpstream;
}

const fast = { connectMs: 500, firstByteMs: 2000, idleMs: 2000, totalMs: 10_000 };

/** Plan, two accounts, three keys (one with a low RPM), route "smart" (primary, secondary; falls back to "cheap"). */
export function trafficManifests(u: Upstreams): { docs: object[]; keys: Record<'a1' | 'a2' | 'b1' | 'limited', string> } {
  const made = {
    a1: apiKey('a1', 'acme'),
    a2: apiKey('a2', 'acme'),
    b1: apiKey('b1', 'globex'),
    limited: apiKey('limited', 'globex', { limits: { rpm: 3 } }),
  };
  return {
    keys: { a1: made.a1.key, a2: made.a2.key, b1: made.b1.key, limited: made.limited.key },
    docs: [
      plan('builder', { tier: 2 }),
      account('acme', 'builder', { trialCreditUsd: 50, credits: [{ id: 'po-1', amountUsd: 100 }] }),
      account('globex', 'builder', { trialCreditUsd: 20 }),
      ...Object.values(made).flatMap((m) => m.docs),
      route(
        'smart',
        [
          { name: 'primary', provider: 'openai', baseUrl: u.primary.baseUrl, weight: 1, timeouts: fast },
          { name: 'secondary', provider: 'openai', baseUrl: u.secondary.baseUrl, weight: 0, timeouts: fast },
        ],
        { fallbacks: ['cheap'] },
      ),
      route('cheap', [{ name: 'backup', provider: 'openai', baseUrl: u.backup.baseUrl, timeouts: fast }], {
        pricing: { inputPerMTokUsd: 0.52, outputPerMTokUsd: 1.04 },
      }),
    ],
  };
}

/** What each fake answers, by the kind written in the call's message ("kind:<kind>:<prompt>:<completion>"). */
export function script(u: Upstreams): void {
  const of =
    (name: keyof Upstreams) =>
    (call: RecordedCall): Behavior => {
      const m = /kind:([a-z-]+):(\d+):(\d+)/.exec(JSON.stringify(call.body.messages ?? ''));
      const usage = { prompt_tokens: Number(m?.[2] ?? 11), completion_tokens: Number(m?.[3] ?? 7) };
      const reply: Behavior = { kind: 'reply', usage, content: 'One two three four five six.' };
      switch (m?.[1] as Kind | undefined) {
        case 'fb-target':
          return name === 'primary' ? { kind: 'status', status: 500 } : reply;
        case 'fb-model':
          return name === 'backup' ? reply : { kind: 'status', status: 503 };
        case 'upstream-error':
          return { kind: 'status', status: 500 };
        case 'bad-request':
          return { kind: 'status', status: 400, body: { error: { message: 'bad', type: 'invalid_request_error' } } };
        case 'cut':
          return { kind: 'cut', afterChunks: 2 };
        case 'abort':
          return { ...reply, content: 'word '.repeat(40), chunkDelayMs: 50 };
        default:
          return reply;
      }
    };
  u.primary.fallback = of('primary');
  u.secondary.fallback = of('secondary');
  u.backup.fallback = of('backup');
}

export function servedTokens(u: Upstreams): { input: number; output: number } {
  const all = [u.primary, u.secondary, u.backup];
  return { input: all.reduce((a, f) => a + f.served.prompt, 0), output: all.reduce((a, f) => a + f.served.completion, 0) };
}

export interface CallOutcome {
  kind: Kind;
  status: number;
  taskType: string | null;
}

/** One call of the given kind; `i` varies the tokens and the task. */
export async function callOfKind(url: string, key: string, kind: Kind, i: number): Promise<CallOutcome> {
  const taskType = TASKS[i % TASKS.length] ?? null;
  const stream = kind === 'ok-stream' || kind === 'cut' || kind === 'abort' || (kind === 'fb-target' && i % 2 === 0);
  const body = {
    model: 'smart',
    stream,
    max_tokens: 64,
    messages: [{ role: 'user', content: `kind:${kind}:${5 + (i % 17)}:${3 + (i % 11)}` }],
    ...(taskType ? { metadata: { task_type: taskType } } : {}),
  };
  const ctrl = new AbortController();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    signal: ctrl.signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (kind === 'abort') {
    const reader = res.body?.getReader();
    await reader?.read();
    ctrl.abort();
    await reader?.cancel().catch(() => {});
    return { kind, status: 499, taskType };
  }
  await res.text().catch(() => '');
  return { kind, status: res.status, taskType };
}

/** `n` calls spread over the gateways and keys, `concurrency` at a time, plus a burst on the low-RPM key. */
export async function mixedTraffic(urls: string[], keys: Record<'a1' | 'a2' | 'b1' | 'limited', string>, n: number, concurrency = 8): Promise<CallOutcome[]> {
  const out: CallOutcome[] = [];
  const keyList = [keys.a1, keys.a2, keys.b1];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      out.push(await callOfKind(urls[i % urls.length] as string, keyList[i % keyList.length] as string, KINDS[i % KINDS.length] as Kind, i));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  // Past the key's RPM: refused with 429, and still one usage event each.
  for (let i = 0; i < 5; i++) out.push(await callOfKind(urls[i % urls.length] as string, keys.limited, 'ok', i));
  return out;
}
