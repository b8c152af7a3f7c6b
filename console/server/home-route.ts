// GET / : a browser (Accept naming text/html) gets the landing page; an API client keeps the JSON 404 in OpenAI's
// shape that every unknown path of the API answers. Served wherever the public pages are (the standalone process, the
// console process in a cluster, where the chart's Ingress routes / to it).
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../../gateway/errors/catalog.ts';
import { homeBody } from '../pages/home.ts';
import { page } from '../pages/layout.ts';
import { publicPage } from './public-page.ts';

/** True when the Accept header names text/html (or XHTML) with a non-zero quality: a browser's navigation. */
export function wantsHtml(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (type !== 'text/html' && type !== 'application/xhtml+xml') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

function docsUrl(env: Record<string, string | undefined>): string | null {
  const u = env.SVC_DOCS_URL?.trim();
  return u && /^https?:\/\//.test(u) ? u : null;
}

export function homeRoute(app: FastifyInstance, env: Record<string, string | undefined>): void {
  const body = publicPage(page({ title: 'svc-gateway' }, homeBody({ docsUrl: docsUrl(env) })));
  app.get('/', async (req, reply) => {
    reply.header('vary', 'Accept');
    if (!wantsHtml(req.headers.accept)) {
      return reply.code(404).send(errorBody('openai', 'not_found', `No route ${req.method} /.`));
    }
    return reply.type('text/html; charset=utf-8').send(body);
  });
}
