// The Anthropic-compatible endpoints under /anthropic (an Anthropic SDK or coding agent sets its base URL there):
// messages and count_tokens through the pipeline, plan-gated; the model list in Anthropic's format; the
// connectivity probe Claude Code sends to {base}/api/hello. Registered under the /anthropic prefix, in a plugin whose
// errors take Anthropic's shape (server.ts).
import type { FastifyInstance } from 'fastify';
import { entryOf, type CompiledModel } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { DEFAULT_ANTHROPIC_VERSION } from '../providers/anthropic/index.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';
import { serveCall } from './serve-call.ts';
import type { Principal } from '../pipeline/resolve.ts';
import type { AnthropicHeaders } from '../translate/anthropic/anthropic-anthropic.ts';
import { countTokensTranslation, messagesTranslation } from '../translate/select.ts';
import { countTokensBody, messagesBody, modelsQuery } from './anthropic-schemas.ts';
import { keyFirst } from './key-first.ts';
import { parseBody, taskTypeOf } from './validate.ts';

type RawHeaders = Record<string, string | string[] | undefined>;

export function anthropicHeadersOf(h: RawHeaders): AnthropicHeaders {
  const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v)?.trim() || undefined;
  return { version: one(h['anthropic-version']), beta: one(h['anthropic-beta']) };
}

function upstreamVary(h: AnthropicHeaders): Record<string, string | undefined> {
  return { ...h, version: h.version ?? DEFAULT_ANTHROPIC_VERSION };
}

/** The Anthropic endpoint is open to plans that set anthropicEndpoint (Builder and above). */
export function anthropicPlanGate(p: Principal): void {
  if (!p.plan.anthropicEndpoint) {
    throw new GatewayError(
      'endpoint_not_allowed',
      `The ${p.plan.name} plan does not include the Anthropic-compatible endpoint; use /v1/chat/completions or a Builder plan.`,
    );
  }
}

const CREATED_AT = '2026-01-01T00:00:00Z'; // the model list is config, not history

function modelInfo(m: CompiledModel): object {
  return { type: 'model', id: m.id, display_name: m.id, created_at: CREATED_AT };
}

/** Anthropic's cursor pagination: after_id pages forward, before_id backward; an unknown cursor gives an empty page. */
export function pageOf<T extends { id: string }>(all: T[], q: { limit: number; after_id?: string; before_id?: string }): { page: T[]; hasMore: boolean } {
  if (q.before_id !== undefined) {
    const end = all.findIndex((m) => m.id === q.before_id);
    const start = Math.max(0, end - q.limit);
    return end < 0 ? { page: [], hasMore: false } : { page: all.slice(start, end), hasMore: start > 0 };
  }
  const start = q.after_id === undefined ? 0 : all.findIndex((m) => m.id === q.after_id) + 1;
  if (q.after_id !== undefined && start === 0) return { page: [], hasMore: false };
  return { page: all.slice(start, start + q.limit), hasMore: start + q.limit < all.length };
}

export function anthropicRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/messages', { onRequest: keyFirst('anthropic') }, async (req, reply) => {
    const body = parseBody(messagesBody, req.body, 'anthropic');
    return serveCall(deps, req, reply, {
      dialect: 'anthropic',
      endpoint: 'messages',
      modelType: 'chat',
      modelId: body.model,
      stream: body.stream === true,
      taskType: taskTypeOf(body.metadata),
      maxTokens: body.max_tokens,
      inputBytes: req.bodyBytes,
      extraInputTokens: nonTextTokens(body.messages, body.system) + toolsTokens(body.tools),
      translationFor: messagesTranslation(body, anthropicHeadersOf(req.headers)),
      guardBody: body as Record<string, unknown>,
      gate: anthropicPlanGate,
      cacheBody: body,
      // The headers that shape the upstream request are part of the cache key too, as sent upstream: no
      // anthropic-version is the version the gateway sends for it.
      cacheVary: upstreamVary(anthropicHeadersOf(req.headers)),
    });
  });

  // Free, as Anthropic's: no output is reserved and no input bytes are held.
  app.post('/v1/messages/count_tokens', { onRequest: keyFirst('anthropic') }, async (req, reply) => {
    const body = parseBody(countTokensBody, req.body, 'anthropic');
    return serveCall(deps, req, reply, {
      dialect: 'anthropic',
      endpoint: 'count_tokens',
      modelType: 'chat',
      modelId: body.model,
      stream: false,
      taskType: taskTypeOf(body.metadata),
      maxTokens: 0,
      inputBytes: 0,
      translationFor: countTokensTranslation(body, anthropicHeadersOf(req.headers)),
      gate: anthropicPlanGate,
    });
  });

  app.get('/v1/models', async (req) => {
    const q = parseBody(modelsQuery, { ...(req.query as object) }, 'anthropic');
    const all = Object.values(deps.config.current().models)
      .filter((m) => m.type === 'chat')
      .sort((a, b) => a.id.localeCompare(b.id));
    const { page, hasMore } = pageOf(all, q);
    return { data: page.map(modelInfo), has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
  });

  app.get<{ Params: { '*': string } }>('/v1/models/*', async (req) => {
    const id = req.params['*'];
    const m = entryOf(deps.config.current().models, id);
    if (!m || m.type !== 'chat') throw new GatewayError('model_not_found', `The model ${JSON.stringify(id)} does not exist.`, { param: 'model' });
    return modelInfo(m);
  });

  // Claude Code probes {ANTHROPIC_BASE_URL}/api/hello with HEAD (GET routes answer HEAD too).
  app.get('/api/hello', async () => ({ status: 'ok' }));
  // '/' under the /anthropic prefix answers both /anthropic and /anthropic/.
  app.get('/', async () => ({ status: 'ok', api: 'anthropic', messages: '/anthropic/v1/messages' }));
}
