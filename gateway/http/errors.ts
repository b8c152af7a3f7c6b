// Every failure becomes the catalog's error in the caller's dialect: never an HTML page, never a stack.
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError, type Dialect } from '../errors/catalog.ts';
import { sendError } from '../pipeline/handle-call.ts';

export function dialectOf(req: FastifyRequest): Dialect {
  return req.url.startsWith('/anthropic') ? 'anthropic' : 'openai';
}

function fromFastify(err: FastifyError): GatewayError | null {
  const code = err.code ?? '';
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) {
    return new GatewayError('request_too_large', 'The request body is too large.');
  }
  if (code.startsWith('FST_ERR_CTP_') || err instanceof SyntaxError) {
    return new GatewayError('invalid_json', 'The request body is not valid JSON.');
  }
  if (err.validation) return new GatewayError('invalid_request', err.message);
  return null;
}

export function errorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (reply.sent || reply.raw.headersSent) return;
    let ge = err instanceof GatewayError ? err : fromFastify(err);
    if (!ge) {
      req.log.error({ err }, 'Request failed');
      ge = new GatewayError('internal_error', 'The gateway failed to process the request.');
    }
    sendError(reply, dialectOf(req), ge);
  });
  app.setNotFoundHandler((req, reply) => {
    sendError(reply, dialectOf(req), new GatewayError('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`));
  });
}
