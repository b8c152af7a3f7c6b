// The OpenAI-compatible endpoints beyond chat and embeddings: legacy text completions (fill-in-the-middle included),
// rerank (with /cohere/v2/rerank for Cohere's clients, errors in Cohere's shape) and moderations. Thin routes over the same pipeline: the same
// keys, limits, holds, settlement, usage events, cache and traces as chat.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dialect } from '../errors/catalog.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { choicesOf } from '../pipeline/estimate.ts';
import { searchUnitsBound } from '../pipeline/rerank-bound.ts';
import { completionsTranslation, moderationsTranslation, rerankTranslation } from '../translate/select.ts';
import { keyFirst } from './key-first.ts';
import { serveCall } from './serve-call.ts';
import { completionsBody, moderationsBody, rerankBody } from './text-schemas.ts';
import { parseBody, taskTypeOf } from './validate.ts';

export function textRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/completions', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(completionsBody, req.body);
    return serveCall(deps, req, reply, {
      dialect: 'openai',
      endpoint: 'completions',
      modelType: 'completions',
      modelId: body.model,
      stream: body.stream === true,
      taskType: taskTypeOf(body.metadata),
      maxTokens: body.max_tokens ?? undefined,
      // The upstream generates best_of candidates and returns n of them: the larger is what it may bill.
      choices: Math.max(choicesOf(body.n), choicesOf(body.best_of)),
      inputBytes: req.bodyBytes,
      translationFor: completionsTranslation(body),
      guardBody: body as Record<string, unknown>,
      cacheBody: body,
    });
  });

  app.post('/v1/rerank', { onRequest: keyFirst('openai') }, rerankHandler(deps, 'openai'));

  app.post('/v1/moderations', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(moderationsBody, req.body);
    return serveCall(deps, req, reply, {
      dialect: 'openai',
      endpoint: 'moderations',
      modelType: 'moderation',
      modelId: body.model,
      stream: false,
      taskType: taskTypeOf(body.metadata),
      maxTokens: 0,
      inputBytes: req.bodyBytes,
      translationFor: moderationsTranslation(body),
      cacheBody: body,
    });
  });
}

/** POST /v1/rerank, and Cohere's POST /v2/rerank under /cohere: the same call, refused in the caller's dialect. */
function rerankHandler(deps: GatewayDeps, dialect: Dialect) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const body = parseBody(rerankBody, req.body, dialect);
    return serveCall(deps, req, reply, {
      dialect,
      endpoint: 'rerank',
      modelType: 'rerank',
      modelId: body.model,
      stream: false,
      taskType: taskTypeOf(body.metadata),
      maxTokens: 0,
      searchUnits: searchUnitsBound(body.query, body.documents),
      inputBytes: req.bodyBytes,
      translationFor: rerankTranslation(body),
      cacheBody: body,
    });
  };
}

/** The routes of the /cohere prefix (its own plugin, whose errors are Cohere's: server.ts). */
export function cohereRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v2/rerank', { onRequest: keyFirst('cohere') }, rerankHandler(deps, 'cohere'));
}
