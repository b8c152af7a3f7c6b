// POST /v1/responses (the OpenAI Responses API) through the same pipeline as /v1/chat/completions. A call that stores
// its response (store, OpenAI's default) or continues one (previous_response_id, item_reference) runs with the
// stored-Responses step around it (stored-responses/step.ts); the routes that read stored responses are in
// stored-responses-routes.ts.
import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../pipeline/context.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';
import { serveCall } from './serve-call.ts';
import { needsStep, storedStep } from '../stored-responses/step.ts';
import { refuseStateful } from '../translate/responses/responses-refuse.ts';
import { responsesTranslation } from '../translate/select.ts';
import { keyFirst } from './key-first.ts';
import { responsesBody } from './responses-schemas.ts';
import { storedResponsesRoutes } from './stored-responses-routes.ts';
import { parseBody, taskTypeOf } from './validate.ts';

export function responsesRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  const stored = deps.responses;
  app.post('/v1/responses', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(responsesBody, req.body);
    const taskType = taskTypeOf(body.metadata);
    refuseStateful(body, stored !== undefined);
    return serveCall(deps, req, reply, {
      dialect: 'openai',
      endpoint: 'responses',
      modelType: 'chat',
      modelId: body.model,
      stream: body.stream === true,
      taskType,
      maxTokens: body.max_output_tokens ?? undefined,
      inputBytes: req.bodyBytes,
      extraInputTokens: nonTextTokens(body.input) + toolsTokens(body.tools),
      translationFor: responsesTranslation(body),
      around: stored && needsStep(body) ? storedStep(stored, body, deps.now) : undefined,
      guardBody: body as Record<string, unknown>,
    });
  });
  if (stored) storedResponsesRoutes(app, deps, stored);
}
