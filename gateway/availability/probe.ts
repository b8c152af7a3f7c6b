// One probe: a minimal real call to a target with its own credentials and timeouts (chat: one short message,
// max_tokens 1; embeddings: one short input), straight through the provider, never through the call pipeline, so no
// account is billed: the cost is the platform's and is recorded with the probe.
import { costNano } from '../contract/money.ts';
import type { CompiledModel, CompiledTarget } from '../contract/snapshot.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { protocolOf, UpstreamFailure, type Operation, type Protocol } from '../providers/types.ts';
import { chatTranslation, embeddingsTranslation } from '../translate/select.ts';
import type { ProbeResult } from './types.ts';

interface ProbeRequest {
  operation: Operation;
  body: string;
}

export function probeRequest(model: CompiledModel, target: CompiledTarget, protocol: Protocol): ProbeRequest {
  const messages = [{ role: 'user', content: 'ping' }];
  if (protocol === 'converse' || protocol === 'gemini') {
    // The clouds' own protocols: the same minimal call, built by the translator a client's call would take.
    const body = model.type === 'embeddings' ? { model: model.id, input: 'ping' } : { model: model.id, messages, max_tokens: 1 };
    const r = (model.type === 'embeddings' ? embeddingsTranslation(body) : chatTranslation(body))(protocol).request(target, model);
    return { operation: r.operation, body: r.body };
  }
  if (protocol === 'anthropic') return { operation: 'messages', body: JSON.stringify({ model: target.upstreamModel, max_tokens: 1, messages }) };
  if (model.type === 'embeddings') return { operation: 'embeddings', body: JSON.stringify({ model: target.upstreamModel, input: 'ping' }) };
  if (model.type === 'completions') return { operation: 'completions', body: JSON.stringify({ model: target.upstreamModel, prompt: 'ping', max_tokens: 1 }) };
  if (model.type === 'rerank') return { operation: 'rerank', body: JSON.stringify({ model: target.upstreamModel, query: 'ping', documents: ['ping'] }) };
  if (model.type === 'moderation') return { operation: 'moderations', body: JSON.stringify({ model: target.upstreamModel, input: 'ping' }) };
  return { operation: 'chat', body: JSON.stringify({ model: target.upstreamModel, messages, max_tokens: 1 }) };
}

/** Tokens the upstream reported (OpenAI, Anthropic, Bedrock Converse or Gemini usage), 0 when it said nothing readable. */
export function probeTokens(body: string): { input: number; output: number } {
  try {
    const parsed = JSON.parse(body) as { usage?: Record<string, unknown>; usageMetadata?: Record<string, unknown> };
    const u = parsed.usage ?? {};
    const g = parsed.usageMetadata ?? {};
    const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
    return {
      input: n(u.prompt_tokens ?? u.input_tokens ?? u.inputTokens ?? g.promptTokenCount),
      output: n(u.completion_tokens ?? u.output_tokens ?? u.outputTokens ?? g.candidatesTokenCount),
    };
  } catch {
    return { input: 0, output: 0 };
  }
}

async function drain(body: AsyncIterable<Uint8Array | string>): Promise<string> {
  let out = '';
  for await (const c of body) out += typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
  return out;
}

export async function probeTarget(
  providers: ProviderRegistry,
  model: CompiledModel,
  target: CompiledTarget,
  at: number,
  now: () => number = Date.now,
): Promise<ProbeResult> {
  const started = now();
  const base = { model: model.id, target: target.name, at };
  const provider = providers.get(target.provider);
  const req = probeRequest(model, target, protocolOf(provider, target));
  const ctrl = new AbortController();
  const limitMs = Math.min(target.timeouts.totalMs, target.timeouts.connectMs + target.timeouts.firstByteMs);
  const timer = setTimeout(() => ctrl.abort(new UpstreamFailure('timeout', `no answer within ${limitMs} ms`)), limitMs);
  timer.unref();
  try {
    const o = await provider.send({ target, operation: req.operation, body: req.body, stream: false, headers: {}, signal: ctrl.signal });
    const body = o.kind === 'stream' ? await drain(o.body) : o.body;
    const latencyMs = now() - started;
    const t = probeTokens(body);
    const cost = costNano(t.input, t.output, model);
    if (o.kind === 'error') return { ...base, ok: false, latencyMs, status: o.status, message: `${target.name}: HTTP ${o.status}`, costNano: cost };
    return { ...base, ok: true, latencyMs, status: o.status, message: `${target.name}: OK in ${latencyMs} ms`, costNano: cost };
  } catch (err) {
    const reason = ctrl.signal.reason instanceof UpstreamFailure ? ctrl.signal.reason : err;
    const message = reason instanceof UpstreamFailure ? `${reason.reason.replace('_', ' ')}: ${reason.message}` : 'connect error';
    return { ...base, ok: false, latencyMs: now() - started, status: null, message: `${target.name}: ${message}`, costNano: 0 };
  } finally {
    clearTimeout(timer);
    if (!ctrl.signal.aborted) ctrl.abort();
  }
}
