// /v1/batches: OpenAI's Batch API over the files of /v1/files (files-routes.ts). Creating one holds its worst case;
// the job (gateway/batches/job.ts) runs it upstream and charges what ran.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { batchOf, cancelBatch, createBatch, type BatchDeps } from '../batches/service.ts';
import { batchObject, listObject } from '../batches/shapes.ts';
import { BATCH_URLS, type BatchRecord } from '../batches/types.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { caller } from './files-routes.ts';
import { keyFirst } from './key-first.ts';
import { parseBody } from './validate.ts';

const createBody = z.object({
  input_file_id: z.string().min(1),
  endpoint: z.enum(BATCH_URLS),
  completion_window: z.literal('24h'),
  // OpenAI's Metadata: up to 16 pairs, keys up to 64 characters, values up to 512.
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys')
    .nullish(),
});

const listQuery = z.object({ after: z.string().optional(), limit: z.coerce.number().int().min(1).max(100).default(20) });

type IdParams = { Params: { id: string } };

export function batchRoutes(app: FastifyInstance, deps: GatewayDeps, b: BatchDeps): void {
  app.post('/v1/batches', { onRequest: keyFirst('openai') }, async (req) => {
    const p = await caller(deps, req);
    const body = parseBody(createBody, req.body);
    const batch = await createBatch(b, p, {
      inputFileId: body.input_file_id,
      endpoint: body.endpoint,
      completionWindow: body.completion_window,
      metadata: body.metadata ?? null,
    });
    return batchObject(batch);
  });

  app.get('/v1/batches', { onRequest: keyFirst('openai') }, async (req) => {
    const p = await caller(deps, req);
    const q = parseBody(listQuery, req.query ?? {});
    // Pages read until one more batch than asked is shown: Message Batches (listed on their own endpoint) never
    // shorten a page.
    const all: BatchRecord[] = [];
    for (let after = q.after; all.length <= q.limit;) {
      const page = await b.records.batches(p.account.name, { after, limit: q.limit + 1 });
      all.push(...page.filter((x) => x.dialect === 'openai'));
      if (page.length <= q.limit) break;
      after = page.at(-1)?.id;
    }
    return listObject(all, q.limit, batchObject);
  });

  app.get<IdParams>('/v1/batches/:id', { onRequest: keyFirst('openai') }, async (req) => batchObject(await batchOf(b, await caller(deps, req), req.params.id)));

  app.post<IdParams>('/v1/batches/:id/cancel', { onRequest: keyFirst('openai') }, async (req) =>
    batchObject(await cancelBatch(b, await caller(deps, req), req.params.id)),
  );
}
