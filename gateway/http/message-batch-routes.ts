// /anthropic/v1/messages/batches: Anthropic's Message Batches API (create, retrieve, list, cancel, results, delete)
// as @anthropic-ai/sdk calls it, key in x-api-key (or Authorization: Bearer), plan-gated like the other Anthropic
// routes. Creating one holds its worst case; the job (gateway/batches/job.ts) runs it upstream and charges what ran.
// Registered in the /anthropic plugin, so errors take Anthropic's shape.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { cancelMessageBatch, createMessageBatch, deleteMessageBatch, messageBatches, messageBatchOf, messageBatchResults } from '../batches/message-service.ts';
import { deletedObject, messageBatchObject } from '../batches/message-shapes.ts';
import type { BatchDeps } from '../batches/service.ts';
import type { BatchRecord } from '../batches/types.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import type { Principal } from '../pipeline/resolve.ts';
import { anthropicPlanGate, pageOf } from './anthropic-routes.ts';
import { modelsQuery } from './anthropic-schemas.ts';
import { caller } from './files-routes.ts';
import { keyFirst } from './key-first.ts';
import { parseBody } from './validate.ts';

type IdParams = { Params: { id: string } };

async function anthropicCaller(deps: GatewayDeps, req: FastifyRequest): Promise<Principal> {
  const p = await caller(deps, req, 'anthropic');
  anthropicPlanGate(p);
  return p;
}

/** Where the results are read: this gateway's own URL as the client reached it (the SDK fetches it as given). */
function resultsUrl(req: FastifyRequest, id: string): string {
  const forwarded = String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]
    ?.trim()
    .toLowerCase();
  // Behind a TLS-terminating proxy the client reached https; anything else a header says is not a scheme to name.
  const proto = forwarded === 'https' || forwarded === 'http' ? forwarded : req.protocol;
  return `${proto}://${req.host}/anthropic/v1/messages/batches/${encodeURIComponent(id)}/results`;
}

export function messageBatchRoutes(app: FastifyInstance, deps: GatewayDeps, b: BatchDeps): void {
  const render = (req: FastifyRequest, x: BatchRecord): Record<string, unknown> => messageBatchObject(x, resultsUrl(req, x.id));
  const key = { onRequest: keyFirst('anthropic') };

  // Up to the upload bound (Anthropic's is 256 MB), not the JSON limit of one call.
  app.post('/v1/messages/batches', { ...key, bodyLimit: b.settings.maxUploadBytes }, async (req) =>
    render(req, await createMessageBatch(b, await anthropicCaller(deps, req), req.body)),
  );

  app.get('/v1/messages/batches', key, async (req) => {
    const p = await anthropicCaller(deps, req);
    const q = parseBody(modelsQuery, { ...(req.query as object) }, 'anthropic');
    const { page, hasMore } = pageOf(await messageBatches(b, p), q);
    return { data: page.map((x) => render(req, x)), has_more: hasMore, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null };
  });

  app.get<IdParams>('/v1/messages/batches/:id', key, async (req) => render(req, await messageBatchOf(b, await anthropicCaller(deps, req), req.params.id)));

  app.post<IdParams>('/v1/messages/batches/:id/cancel', key, async (req) =>
    render(req, await cancelMessageBatch(b, await anthropicCaller(deps, req), req.params.id)),
  );

  app.get<IdParams>('/v1/messages/batches/:id/results', key, async (req, reply) => {
    const content = await messageBatchResults(b, await anthropicCaller(deps, req), req.params.id);
    return reply.type('application/x-jsonl').send(content);
  });

  app.delete<IdParams>('/v1/messages/batches/:id', key, async (req) => {
    await deleteMessageBatch(b, await anthropicCaller(deps, req), req.params.id);
    return deletedObject(req.params.id);
  });
}
