// The JSON body parser of every route: fastify's own (prototype-poisoning checks, clear errors), fed the raw bytes,
// whose count is kept on the request; a body refused only for a `__proto__`/`constructor.prototype` key says so. Admission bounds a call's input tokens by that count (no tokenizer yields
// more tokens than bytes), so the prompt is never serialized again just to be measured.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { GatewayError } from '../errors/catalog.ts';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './json-depth.ts';

type Done = (err: Error | null, body?: unknown) => void;

/** fastify refuses these keys (prototype poisoning) with the error of a body that is not JSON at all. */
const FORBIDDEN_KEY =
  'The request body is valid JSON but has a forbidden key: "__proto__", or "constructor" holding "prototype" (refused anywhere in the body, as a prototype-pollution attempt).';

/** Whether a body fastify refused is JSON after all (then a forbidden key was the reason): the error path only. */
function isJson(body: string | Buffer): boolean {
  try {
    JSON.parse(body.toString());
    return true;
  } catch {
    return false;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Size of the request body in bytes (0 without a body). */
    bodyBytes: number;
    /** The body's bytes as received (a pass-through splices a large prompt on them: translate/raw-splice.ts). */
    rawBody: Buffer | undefined;
  }
}

/** Not encapsulated (fastify-plugin): every route reads its body this way. */
export const jsonBodies = fp(jsonBodyParsers, { name: 'svc-json-bodies' });

async function jsonBodyParsers(app: FastifyInstance): Promise<void> {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.decorateRequest('bodyBytes', 0);
  app.decorateRequest('rawBody', undefined);
  const parser = (req: FastifyRequest, body: string | Buffer, done: Done): void => {
    req.bodyBytes = body.length;
    req.rawBody = body as Buffer;
    if (nestedDeeperThan(body as Buffer, MAX_JSON_DEPTH)) {
      done(new GatewayError('invalid_request', `The request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`));
      return;
    }
    // fastify's parser takes the Buffer as it is (secure-json-parse decodes it); its type says string only.
    void parse(req, body as string, (err, value) =>
      done(err && body.length > 0 && isJson(body) ? new GatewayError('invalid_request', FORBIDDEN_KEY) : err, value),
    );
  };
  // fastify reads text/plain as a string of its own: removed, so that type is read as JSON too.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser);
  // Any content type is read as JSON: curl -d without a header still gets a clear answer.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parser);
}
