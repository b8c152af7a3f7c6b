// The OpenAI-compatible endpoints under /v1: thin routes over the pipeline.
import type { FastifyInstance } from 'fastify';
import { expiresInHeader, rfc3339 } from '../contract/key-expiry.ts';
import { nanoToUsd } from '../contract/money.ts';
import { entryOf } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import { KEY_EXPIRES_IN_HEADER } from '../pipeline/headers.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { serveCall } from './serve-call.ts';
import { choicesOf } from '../pipeline/estimate.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';
import { serversFor } from '../mcp/access.ts';
import { principal } from '../pipeline/resolve.ts';
import { chatTranslation, embeddingsTranslation } from '../translate/select.ts';
import { keyFirst } from './key-first.ts';
import { chatBody, embeddingsBody } from './openai-schemas.ts';
import { responsesRoutes } from './responses-routes.ts';
import { textRoutes } from './text-routes.ts';
import { imageRoutes } from './image-routes.ts';
import { audioRoutes } from './audio-routes.ts';
import { parseBody, taskTypeOf } from './validate.ts';

export function openAIRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/chat/completions', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(chatBody, req.body);
    const taskType = taskTypeOf(body.metadata);
    return serveCall(deps, req, reply, {
      dialect: 'openai',
      endpoint: 'chat.completions',
      modelType: 'chat',
      modelId: body.model,
      stream: body.stream === true,
      taskType,
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
      choices: choicesOf(body.n),
      inputBytes: req.bodyBytes,
      extraInputTokens: nonTextTokens(body.messages) + toolsTokens(body.tools),
      translationFor: chatTranslation(body, req.rawBody),
      guardBody: body as Record<string, unknown>,
      cacheBody: body,
    });
  });

  responsesRoutes(app, deps);
  textRoutes(app, deps);
  imageRoutes(app, deps);
  audioRoutes(app, deps);

  app.post('/v1/embeddings', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(embeddingsBody, req.body);
    const taskType = taskTypeOf(body.metadata);
    return serveCall(deps, req, reply, {
      dialect: 'openai',
      endpoint: 'embeddings',
      modelType: 'embeddings',
      modelId: body.model,
      stream: false,
      taskType,
      maxTokens: 0,
      inputBytes: req.bodyBytes,
      translationFor: embeddingsTranslation(body),
      guardBody: body as Record<string, unknown>,
      cacheBody: body,
    });
  });

  app.get('/v1/models', async () => {
    const snap = deps.config.current();
    return { object: 'list', data: Object.values(snap.models).map((m) => modelEntry(m)) };
  });

  app.get<{ Params: { id: string } }>('/v1/models/:id', async (req) => {
    const m = entryOf(deps.config.current().models, req.params.id);
    if (!m) throw new GatewayError('model_not_found', `The model ${JSON.stringify(req.params.id)} does not exist.`, { param: 'model' });
    return modelEntry(m);
  });

  app.get('/v1/me', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const key = await authenticate(req.headers, 'openai', deps.store, deps.pepper);
    const p = principal(deps.config.current(), key);
    const now = deps.now();
    const v = await deps.store.view(p.account.name, key.name, now);
    const expiresIn = expiresInHeader(key.expiresAt, now + key.clockOffsetMs);
    if (expiresIn !== null) void reply.header(KEY_EXPIRES_IN_HEADER, expiresIn);
    return {
      key: { name: key.name, display: key.display, state: key.revoked ? 'revoked' : 'active' },
      account: p.account.name,
      plan: p.plan.name,
      balance_usd: nanoToUsd(v.balanceNano),
      monthly_budget_usd: key.monthlyBudgetNano === null ? null : nanoToUsd(key.monthlyBudgetNano),
      month_spend_usd: nanoToUsd(v.keyMonthSpendNano),
      month_cache_hits: v.keyMonthCacheHits ?? 0,
      month_cache_saved_usd: nanoToUsd(v.keyMonthCacheSavedNano ?? 0),
      rpm_limit: key.rpm,
      tpm_limit: key.tpm,
      model_whitelist: key.models,
      // Tools beside models: the McpServers this key may use, and its own tool globs (over "<server>/<tool>").
      mcp_servers: serversFor(deps.config.current(), p).map((s) => s.name),
      mcp_tool_whitelist: key.mcp?.tools ?? null,
      expires_at: typeof key.expiresAt === 'number' ? rfc3339(key.expiresAt) : null,
      created_at: typeof key.createdAt === 'number' ? rfc3339(key.createdAt) : null,
    };
  });
}

const CREATED = 1_767_225_600; // 2026-01-01: the model list is config, not history.

/** OpenAI's model object, and what the model serves (`type`: chat, embeddings, completions, rerank, moderation, image, transcription, speech). */
function modelEntry(m: { id: string; type: string }): object {
  return { id: m.id, object: 'model', created: CREATED, owned_by: 'svc-gateway', type: m.type };
}
