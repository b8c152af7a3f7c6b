// The pipeline without a server: billing, refusals, fallback and a client that leaves, through a recording sink, on
// the memory store. The upstream is a scripted in-process provider (the only fake) next to the built-in mock.
import { afterEach, describe, expect, it } from 'vitest';
import { compile } from '../contract/compile.ts';
import { hashKey } from '../contract/keys.ts';
import { formatIssue, parseManifests } from '../config/manifests.ts';
import { GatewayError } from '../errors/catalog.ts';
import { Metrics } from '../http/metrics.ts';
import { ProviderRegistry } from '../providers/registry.ts';
import type { Provider, UpstreamCall, UpstreamOutcome } from '../providers/types.ts';
import { MemoryStore } from '../state/memory-store.ts';
import { chatTranslation } from '../translate/select.ts';
import { MemoryUsageSink } from '../usage/event.ts';
import { apiKey, basics, route } from '../../test/helpers/manifests.ts';
import { runCall, type CallSink, type CallSpec } from './call.ts';
import type { CallTracer, GatewayDeps } from './context.ts';

const PEPPER = 'call-test-pepper';

/** An upstream scripted per call: each answer in turn, counting the calls it got. */
class ScriptedProvider implements Provider {
  readonly protocol = 'openai' as const;
  calls = 0;
  private readonly answers: UpstreamOutcome[];
  constructor(answers: UpstreamOutcome[]) {
    this.answers = answers;
  }
  async close(): Promise<void> {}
  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    this.calls++;
    call.signal.throwIfAborted();
    return this.answers.shift() ?? { kind: 'error', status: 500, body: '{}', retryAfter: undefined };
  }
}

class Registry extends ProviderRegistry {
  private readonly openai: Provider;
  constructor(openai: Provider) {
    super();
    this.openai = openai;
  }
  override get(kind: Parameters<ProviderRegistry['get']>[0]): Provider {
    return kind === 'openai' ? this.openai : super.get(kind);
  }
}

interface Recorded {
  headers: Record<string, string>;
  json: { status: number; body: string } | null;
}

function recordingSink(): CallSink & { out: Recorded } {
  const out: Recorded = { headers: {}, json: null };
  return {
    out,
    headers: (h) => Object.assign(out.headers, h),
    json: (status, h, body) => {
      Object.assign(out.headers, h);
      out.json = { status, body };
    },
    stream: () => {
      throw new Error('no stream expected');
    },
  };
}

const CHAT_OK = (tokens: [number, number]): UpstreamOutcome => ({
  kind: 'json',
  status: 200,
  body: JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    model: 'up',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: tokens[0], completion_tokens: tokens[1], total_tokens: tokens[0] + tokens[1] },
  }),
});

let open: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});

async function setup(
  upstream: ScriptedProvider,
  keyExtra: Record<string, unknown> = {},
): Promise<{ deps: GatewayDeps; key: string; sink: MemoryUsageSink; store: MemoryStore }> {
  const b = basics();
  const k = apiKey('k', 'acme', keyExtra);
  const docs = [
    ...b.docs,
    ...k.docs,
    route('m', [{ name: 'up', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }], { fallbacks: ['backup'] }),
    route('backup', [{ name: 'mock', provider: 'mock' }]),
    route('claude', [{ name: 'anthropic', provider: 'anthropic', baseUrl: 'http://127.0.0.1:9' }]),
  ];
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const compiled = compile(parsed.set, { pepper: PEPPER });
  const sink = new MemoryUsageSink();
  const store = new MemoryStore(sink);
  open.push(store);
  await store.applyConfig(compiled.snapshot, compiled.keys);
  const log = { error: () => {}, warn: () => {} };
  const deps: GatewayDeps = {
    config: { current: () => compiled.snapshot },
    store,
    providers: new Registry(upstream),
    pepper: PEPPER,
    metrics: new Metrics(),
    log,
    now: Date.now,
  };
  return { deps, key: k.key, sink, store };
}

function spec(body: Record<string, unknown>): CallSpec {
  const b = { model: 'm', messages: [{ role: 'user', content: 'hello' }], ...body };
  return {
    dialect: 'openai',
    endpoint: 'chat.completions',
    modelType: 'chat',
    modelId: String(b.model),
    stream: false,
    taskType: null,
    maxTokens: 100,
    inputBytes: JSON.stringify(b).length,
    translationFor: chatTranslation(b),
  };
}

const live = (): AbortSignal => new AbortController().signal;

describe('runCall without a server', () => {
  it('charges the upstream usage at the served model price and records one event', async () => {
    // Within what the call could use: its ~60-byte body, max_tokens 100 (more would be clamped: bound-usage.ts).
    const up = new ScriptedProvider([CHAT_OK([40, 90])]);
    const { deps, key, sink, store } = await setup(up);
    const out = recordingSink();
    await runCall(deps, spec({}), { authorization: `Bearer ${key}` }, live(), out);
    expect(out.out.json?.status).toBe(200);
    expect(JSON.parse(out.out.json?.body ?? '{}')).toMatchObject({ model: 'm' });
    expect(out.out.headers).toMatchObject({ 'x-svc-upstream': 'up', 'x-svc-fallback': 'false' });
    // 1.04 and 2.08 USD per million tokens: 1040 + 2080 nano-USD per token.
    const cost = 40 * 1040 + 90 * 2080;
    expect(sink.events.map((e) => [e.status, e.costNano])).toEqual([[200, cost]]);
    expect(await store.ledger('acme')).toMatchObject({ spentNano: cost, heldNano: 0, openHolds: 0 });
  });

  it('with tracing on, the trace sees the usage event and every metric still counts (a clamped report included)', async () => {
    const up = new ScriptedProvider([CHAT_OK([40, 5_000_000])]);
    const { deps, key, sink } = await setup(up);
    const seen: string[] = [];
    const tracer: CallTracer = {
      start: () => ({
        attempt: () => ({ capture: false, end: (error) => seen.push(`attempt ${error ?? 'ok'}`) }),
        outcome: (e) => seen.push(`outcome ${e.status}`),
        traceId: () => null,
        end: () => seen.push('end'),
      }),
    };
    await runCall({ ...deps, tracer }, spec({}), { authorization: `Bearer ${key}` }, live(), recordingSink());
    expect(seen).toEqual(['attempt ok', 'outcome 200', 'end']);
    expect(sink.events[0]).toMatchObject({ usageClamped: true });
    const clamped = await (deps.metrics as Metrics).registry.getSingleMetric('svc_gateway_usage_clamped_total')?.get();
    expect(clamped?.values).toEqual([{ labels: { reason: 'output' }, value: 1 }]);
  });

  it('falls back to the next model on an upstream 5xx and says why', async () => {
    const up = new ScriptedProvider([{ kind: 'error', status: 503, body: '{"error":{"message":"down"}}', retryAfter: undefined }]);
    const { deps, key, sink } = await setup(up);
    const out = recordingSink();
    await runCall(deps, spec({}), { authorization: `Bearer ${key}` }, live(), out);
    expect(out.out.json?.status).toBe(200);
    expect(out.out.headers).toMatchObject({
      'x-svc-upstream': 'mock',
      'x-svc-served-model': 'backup',
      'x-svc-fallback': 'true',
      'x-svc-fallback-reason': 'upstream_5xx',
    });
    expect(sink.events).toHaveLength(1);
    expect(sink.events[0]).toMatchObject({ servedModel: 'backup', fallback: true, fallbackReason: 'upstream_5xx', status: 200 });
  });

  it('refuses input its first target cannot take before admission: no slot, no hold, no upstream call', async () => {
    const up = new ScriptedProvider([]);
    const { deps, key, store } = await setup(up, { limits: { rpm: 1 } });
    let admits = 0;
    const admit = store.admit.bind(store);
    store.admit = (r) => {
      admits++;
      return admit(r);
    };
    // Anthropic's protocol has no `n`: the translation to the route's only target refuses it.
    await expect(runCall(deps, spec({ model: 'claude', n: 2 }), { authorization: `Bearer ${key}` }, live(), recordingSink())).rejects.toMatchObject({
      status: 400,
      param: 'n',
    });
    expect([admits, up.calls]).toEqual([0, 0]);
  });

  it('gives the RPM slot back when the upstream refuses the input (400)', async () => {
    const up = new ScriptedProvider([{ kind: 'error', status: 400, body: '{"error":{"message":"bad"}}', retryAfter: undefined }, CHAT_OK([1, 1])]);
    const { deps, key, sink, store } = await setup(up, { limits: { rpm: 1 } });
    await expect(runCall(deps, spec({}), { authorization: `Bearer ${key}` }, live(), recordingSink())).rejects.toBeInstanceOf(GatewayError);
    const out = recordingSink();
    await runCall(deps, spec({}), { authorization: `Bearer ${key}` }, live(), out);
    expect(out.out.json?.status).toBe(200);
    expect(sink.events.map((e) => [e.status, e.costNano])).toEqual([
      [400, 0],
      [200, 1040 + 2080],
    ]);
    expect(await store.ledger('acme')).toMatchObject({ openHolds: 0, heldNano: 0 });
  });

  it('a client gone before admission is not admitted; one gone during admission calls no upstream and holds nothing', async () => {
    const up = new ScriptedProvider([CHAT_OK([1, 1])]);
    const { deps, key, sink, store } = await setup(up, { limits: { rpm: 1 } });
    const gone = new AbortController();
    gone.abort();
    const out = recordingSink();
    await runCall(deps, spec({}), { authorization: `Bearer ${key}` }, gone.signal, out);
    expect([out.out.json, sink.events.length]).toEqual([null, 0]);

    const leaving = new AbortController();
    const admit = store.admit.bind(store);
    store.admit = async (r) => {
      const d = await admit(r);
      leaving.abort();
      return d;
    };
    await runCall(deps, spec({}), { authorization: `Bearer ${key}` }, leaving.signal, out);
    expect(up.calls).toBe(0);
    expect(sink.events.map((e) => e.status)).toEqual([499]);
    expect(await store.ledger('acme')).toMatchObject({ openHolds: 0, heldNano: 0, spentNano: 0 });
    // Its RPM slot came back: the key's one call a minute is still there.
    store.admit = admit;
    await runCall(deps, spec({}), { authorization: `Bearer ${key}` }, live(), out);
    expect(out.out.json?.status).toBe(200);
  });

  it('answers a key it does not know with 401 and touches no upstream', async () => {
    const up = new ScriptedProvider([]);
    const { deps } = await setup(up);
    const stranger = apiKey('x', 'acme').key;
    expect(hashKey(stranger, PEPPER)).toMatch(/^[0-9a-f]{64}$/);
    await expect(runCall(deps, spec({}), { authorization: `Bearer ${stranger}` }, live(), recordingSink())).rejects.toMatchObject({ code: 'invalid_api_key' });
    expect(up.calls).toBe(0);
  });
});
