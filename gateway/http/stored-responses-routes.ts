// The routes that read stored responses (OpenAI's shapes): GET and DELETE /v1/responses/{id}, its input_items, its
// cancel, and POST /v1/responses/input_tokens. Each authenticates the key (revoked: 401, as everywhere) and reads only
// its account's records: another account's id answers 404 not_found exactly as an unknown one. None costs money.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../errors/catalog.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { principal } from '../pipeline/resolve.ts';
import { chainItems, itemsPage, rebuiltInput } from '../stored-responses/items.ts';
import type { StoredResponses } from '../stored-responses/service.ts';
import { estimateInputTokens } from '../translate/count-tokens.ts';
import { keyFirst } from './key-first.ts';
import { parseBody } from './validate.ts';

type Id = { Params: { id: string } };

const itemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().min(1).optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
});

const getQuery = z.looseObject({ stream: z.enum(['true', 'false']).optional() });

const inputTokensBody = z.looseObject({
  model: z.string().nullish(),
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]).nullish(),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })).nullish(),
  previous_response_id: z.string().nullish(),
  conversation: z.unknown().optional(),
});

export function storedResponsesRoutes(app: FastifyInstance, deps: GatewayDeps, stored: StoredResponses): void {
  const account = async (req: FastifyRequest): Promise<string> => {
    const key = await authenticate(req.headers, 'openai', deps.store, deps.pepper);
    return principal(deps.config.current(), key).account.name;
  };
  const opts = { onRequest: keyFirst('openai') };

  app.get<Id>('/v1/responses/:id', opts, async (req) => {
    const acct = await account(req);
    const q = parseBody(getQuery, { ...(req.query as object) });
    if (q.stream === 'true') {
      throw new GatewayError(
        'unsupported_content',
        'stream: a stored response is read whole here (streaming it back is for background responses, which this gateway does not run)',
        {
          param: 'stream',
        },
      );
    }
    return (await stored.mustGet(acct, req.params.id, deps.now())).response;
  });

  app.delete<Id>('/v1/responses/:id', opts, async (req) => {
    const acct = await account(req);
    await stored.delete(acct, req.params.id, deps.now());
    return { id: req.params.id, object: 'response', deleted: true };
  });

  app.post<Id>('/v1/responses/:id/cancel', opts, async (req) => {
    const acct = await account(req);
    await stored.mustGet(acct, req.params.id, deps.now());
    throw new GatewayError('unsupported_content', 'Only background responses can be cancelled; this response has already ended.');
  });

  app.get<Id>('/v1/responses/:id/input_items', opts, async (req) => {
    const acct = await account(req);
    const q = parseBody(itemsQuery, { ...(req.query as object) });
    const now = deps.now();
    const r = await stored.mustGet(acct, req.params.id, now);
    // The items used to generate the response: its chain's inputs and outputs, then its own input.
    const before = r.previousId === null ? [] : chainItems(await stored.chain(acct, r.previousId, now).catch(() => []));
    return itemsPage([...before, ...r.input], { order: q.order, after: q.after, limit: q.limit });
  });

  app.post('/v1/responses/input_tokens', opts, async (req) => {
    const acct = await account(req);
    const body = parseBody(inputTokensBody, req.body ?? {});
    if (body.conversation !== undefined && body.conversation !== null) {
      throw new GatewayError('unsupported_content', 'conversation: this gateway keeps no conversations objects; use previous_response_id', {
        param: 'conversation',
      });
    }
    const chain = body.previous_response_id ? await stored.chain(acct, body.previous_response_id, deps.now()) : [];
    const messages = rebuiltInput(chain, body.input ?? []);
    return {
      object: 'response.input_tokens',
      input_tokens: estimateInputTokens({ system: body.instructions ?? undefined, messages, tools: body.tools ?? undefined }),
    };
  });
}
