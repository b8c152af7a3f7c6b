// Every failure becomes the catalog's error in the caller's dialect: never an HTML page, never a stack. Each
// dialect's routes live in a plugin of their own (server.ts) that sets its error handler with its dialect.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, GatewayError, type Dialect } from '../errors/catalog.ts';
import { dialectOfPath } from './client-errors.ts';

export function sendError(reply: FastifyReply, dialect: Dialect, err: GatewayError): void {
  if (err.retryAfterSec !== undefined) void reply.header('retry-after', String(err.retryAfterSec));
  void reply.code(err.status).send(errorBody(dialect, err.code, err.message, err.param));
}

/** fastify's own refusals before routing (a URL it cannot decode, a path parameter too long), in the dialect. */
export function frameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const ge =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new GatewayError('uri_too_long', 'A path segment of the URL is too long.')
      : new GatewayError('invalid_request', 'The URL is not valid.');
  sendError(reply, dialectOfPath(req.url), ge);
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

/** The error handler of one dialect's plugin (and of the root, in OpenAI's shape); `count` sees each code sent. */
export function dialectErrors(app: FastifyInstance, dialect: Dialect, count?: (code: string) => void): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (reply.sent || reply.raw.headersSent) return;
    let ge = err instanceof GatewayError ? err : fromFastify(err);
    if (!ge) {
      req.log.error({ err }, 'Request failed');
      ge = new GatewayError('internal_error', 'The gateway failed to process the request.');
    }
    count?.(ge.code);
    sendError(reply, dialect, ge);
  });
}

/** Unknown paths under the plugin's prefix, in its dialect. */
export function dialectNotFound(app: FastifyInstance, dialect: Dialect): void {
  app.setNotFoundHandler((req, reply) => {
    sendError(reply, dialect, new GatewayError('not_found', `No route ${req.method} ${req.url.split('?')[0]}.`));
  });
}
