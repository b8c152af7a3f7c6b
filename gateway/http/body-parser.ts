// The JSON body parser of every route: fastify's own (prototype-poisoning checks, clear errors), fed the raw bytes,
// whose count is kept on the request. Admission bounds a call's input tokens by that count (no tokenizer yields
// more tokens than bytes), so the prompt is never serialized again just to be measured.
import type { FastifyInstance, FastifyRequest } from 'fastify';

type Done = (err: Error | null, body?: unknown) => void;

declare module 'fastify' {
  interface FastifyRequest {
    /** Size of the request body in bytes (0 without a body). */
    bodyBytes: number;
  }
}

export function jsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('bodyBytes', 0);
  const parser = (req: FastifyRequest, body: string | Buffer, done: Done): void => {
    req.bodyBytes = body.length;
    // fastify's parser takes the Buffer as it is (secure-json-parse decodes it); its type says string only.
    void parse(req, body as string, done);
  };
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser);
  // Any content type is read as JSON: curl -d without a header still gets a clear answer.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parser);
}
