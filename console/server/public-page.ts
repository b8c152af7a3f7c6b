// The public pages (/, /status, /trust): no sign-in, the console's look and security headers.
import type { FastifyInstance } from 'fastify';
import type { Html } from '../html.ts';
import { CSP } from './security.ts';

/**
 * The console's page shell for a public page: its stylesheets served from /status/static (the page works where only
 * the public paths are routed) and, instead of the console's script, status.js (the self-refresh of /status).
 */
export function publicPage(doc: Html, script = false): string {
  const head = `<link rel="stylesheet" href="/status/static/status.css">${script ? '<script src="/status/static/status.js" defer></script>' : ''}`;
  return doc.value
    .replace('/dashboard/static/console.css', '/status/static/console.css')
    .replace(/<script src="\/dashboard\/static\/console\.js" defer><\/script>\n?/, '')
    .replace('</head>', `${head}</head>`);
}

export function publicHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-frame-options', 'DENY');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-cache');
    return payload;
  });
}
