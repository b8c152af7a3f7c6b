// CORS as the README's table (OpenAI-compatible API, CORS). Browsers do not honour a wildcard inside a header name, so on a
// preflight the x-stainless-* entry is expanded to the x-stainless-* headers the browser asked for. The
// Anthropic SDK in a browser also sends anthropic-beta and anthropic-dangerous-direct-browser-access: those two
// are allowed when asked for (an addition, noted in the README under the contract changes).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export function corsHeaders(): Record<string, string> {
  return {
    'access-control-allow-origin': '*',
    'access-control-expose-headers':
      'x-svc-upstream, x-svc-fallback, x-svc-original-model, x-svc-served-model, x-svc-fallback-reason, x-svc-dropped-tools, x-svc-key-expires-in, x-svc-cache, retry-after',
  };
}

export const ALLOW_METHODS = 'POST, GET, OPTIONS';
export const ALLOW_HEADERS = 'authorization, content-type, x-api-key, anthropic-version, cache-control, x-svc-cache, x-stainless-*';

const ANTHROPIC_BROWSER = new Set(['anthropic-beta', 'anthropic-dangerous-direct-browser-access']);

export function allowHeadersFor(requested: string | undefined): string {
  const extra = (requested ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h.startsWith('x-stainless-') || ANTHROPIC_BROWSER.has(h));
  return [ALLOW_HEADERS, ...new Set(extra)].join(', ');
}

/** Not encapsulated (fastify-plugin): the hook answers every route's requests, the dialect plugins' included. */
export const cors = fp(corsHook, { name: 'svc-cors' });

async function corsHook(app: FastifyInstance): Promise<void> {
  const always = corsHeaders();
  // Callback style: an async hook costs a promise and a microtask on every request.
  app.addHook('onRequest', (req, reply, done) => {
    // /mcp has its own rules (an allowed list of origins: DNS-rebinding protection), in mcp-routes.ts.
    if (req.url === '/mcp' || req.url.startsWith('/mcp/') || req.url.startsWith('/mcp?')) {
      done();
      return;
    }
    void reply.headers(always);
    if (req.method !== 'OPTIONS') {
      done();
      return;
    }
    const requested = req.headers['access-control-request-headers'];
    void reply
      .code(204)
      .headers({
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': allowHeadersFor(Array.isArray(requested) ? requested.join(',') : requested),
        'access-control-max-age': '600',
      })
      .send();
  });
}
