// POST /v1/responses (the OpenAI Responses API) through the same pipeline as /v1/chat/completions. Stateless: the
// gateway stores no responses, so the routes that read or change a stored one answer 404 saying so.
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/catalog.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { nonTextTokens, toolsTokens } from '../pipeline/non-text.ts';
import { serveCall } from './serve-call.ts';
import { refuseStateful } from '../translate/responses-refuse.ts';
import { responsesTranslation } from '../translate/select.ts';
import { keyFirst } from './key-first.ts';
import { responsesBody } from './responses-schemas.ts';
import { parseBody, taskTypeOf } from './validate.ts';

const NOT_STORED = 'This gateway stores no responses: each call sends its whole conversation in `input` (store: false).';

export function responsesRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/responses', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(responsesBody, req.body);
    const taskType = taskTypeOf(body.metadata);
    refuseStateful(body);
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
      guardBody: body as Record<string, unknown>,
    });
  });

  const notStored = async (): Promise<never> => {
    throw new GatewayError('not_found', NOT_STORED);
  };
  app.get('/v1/responses/:id', notStored);
  app.delete('/v1/responses/:id', notStored);
  app.post('/v1/responses/:id/cancel', notStored);
  app.get('/v1/responses/:id/input_items', notStored);
}
