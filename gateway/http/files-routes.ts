// /v1/files: batch input files uploaded (multipart, purpose batch, every line checked), listed, read, deleted; the
// output and error files of batches read the same way. Per account: another account's file id is not found.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../errors/catalog.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { principal, type Principal } from '../pipeline/resolve.ts';
import { uploadFile, type BatchDeps } from '../batches/service.ts';
import { fileObject, listObject } from '../batches/shapes.ts';
import { MESSAGE_BATCH_PURPOSES, type FileRecord } from '../batches/types.ts';
import { keyFirst } from './key-first.ts';
import { readUpload } from './multipart.ts';
import { parseBody } from './validate.ts';

export async function caller(deps: GatewayDeps, req: FastifyRequest, dialect: 'openai' | 'anthropic' = 'openai'): Promise<Principal> {
  const key = await authenticate(req.headers, dialect, deps.store, deps.pepper);
  return principal(deps.config.current(), key);
}

const listQuery = z.object({
  after: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(10_000),
  purpose: z.string().optional(),
});

type IdParams = { Params: { id: string } };

export function filesRoutes(app: FastifyInstance, deps: GatewayDeps, b: BatchDeps): void {
  // The upload is read from the stream by the route (multipart.ts), bounded by its own setting, not the JSON limit.
  app.addContentTypeParser('multipart/form-data', (_req, payload, done) => done(null, payload));

  app.post('/v1/files', { onRequest: keyFirst('openai') }, async (req) => {
    const p = await caller(deps, req);
    const up = await readUpload(req.raw, req.headers, b.settings.maxUploadBytes);
    if (up.fields.purpose === undefined) throw new GatewayError('invalid_request', 'The upload needs a `purpose` field (batch).', { param: 'purpose' });
    if (up.fields.purpose !== 'batch')
      throw new GatewayError('invalid_request', `This gateway keeps files of purpose batch only (got ${JSON.stringify(up.fields.purpose)}).`, {
        param: 'purpose',
      });
    if (!up.file) throw new GatewayError('invalid_request', 'The upload has no `file` part.', { param: 'file' });
    return fileObject(await uploadFile(b, p, up.file.filename, up.file.content));
  });

  app.get('/v1/files', { onRequest: keyFirst('openai') }, async (req) => {
    const p = await caller(deps, req);
    const q = parseBody(listQuery, req.query ?? {});
    const shown = (f: FileRecord): boolean => !MESSAGE_BATCH_PURPOSES.has(f.purpose) && (q.purpose === undefined || f.purpose === q.purpose);
    // Pages read until one more file than asked is shown (or none is left), so files left out never shorten a page.
    const all: FileRecord[] = [];
    for (let after = q.after; all.length <= q.limit;) {
      const page = await b.records.files(p.account.name, { after, limit: q.limit + 1 }, b.now());
      all.push(...page.filter(shown));
      if (page.length <= q.limit) break;
      after = page.at(-1)?.id;
    }
    return listObject(all, q.limit, fileObject);
  });

  app.get<IdParams>('/v1/files/:id', { onRequest: keyFirst('openai') }, async (req) => {
    const p = await caller(deps, req);
    const f = await b.records.file(p.account.name, req.params.id, b.now());
    if (!served(f)) throw notFound(req.params.id);
    return fileObject(f);
  });

  app.get<IdParams>('/v1/files/:id/content', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const p = await caller(deps, req);
    const c = served(await b.records.file(p.account.name, req.params.id, b.now())) ? await b.records.content(p.account.name, req.params.id, b.now()) : null;
    if (!c) throw notFound(req.params.id);
    return reply.type('application/octet-stream').send(c);
  });

  app.delete<IdParams>('/v1/files/:id', { onRequest: keyFirst('openai') }, async (req) => {
    const p = await caller(deps, req);
    if (!served(await b.records.file(p.account.name, req.params.id, b.now())) || !(await b.records.deleteFile(p.account.name, req.params.id)))
      throw notFound(req.params.id);
    return { id: req.params.id, object: 'file', deleted: true };
  });
}

/** A file /v1/files serves: a Message Batch's own files are read through its endpoints only. */
function served(f: FileRecord | null): f is FileRecord {
  return f !== null && !MESSAGE_BATCH_PURPOSES.has(f.purpose);
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No such file: ${JSON.stringify(id)}.`, { param: 'file_id' });
}
