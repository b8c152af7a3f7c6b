// The public pages of the console's server: /status (HTML), /status/api/v2/*.json (Atlassian Statuspage shapes),
// /status/badge/<model>.svg, /trust, and the landing page / for browsers (home-route.ts). No sign-in; the console's look and CSP. A plugin of its own, so the console's session
// check never applies here.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { StatusSource } from '../../gateway/availability/view.ts';
import { page } from '../pages/layout.ts';
import { statusBody } from '../pages/status.ts';
import { trustBody } from '../pages/trust.ts';
import { renderSecurityTxt, securityTxt, trustFacts } from '../trust/facts.ts';
import { badgeSvg, componentsJson, incidentsJson, maintenancesJson, statusJson, summaryJson, type PageInfo } from '../status/statuspage.ts';
import { homeRoute } from './home-route.ts';
import { publicHeaders, publicPage } from './public-page.ts';

const STATIC = {
  'console.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../static/console.css', import.meta.url)) },
  'status.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../static/status.css', import.meta.url)) },
  'status.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../static/status.js', import.meta.url)) },
};

export interface StatusDeps {
  source: StatusSource;
  page: PageInfo;
  /** The process's settings (security contact, Redis and Postgres URLs for /trust). */
  env: Record<string, string | undefined>;
  now?: () => number;
}

function json(reply: FastifyReply, body: object): FastifyReply {
  // Monitors and widgets on other origins read these: open to any origin, cached briefly.
  return reply
    .header('access-control-allow-origin', '*')
    .header('cache-control', 'public, max-age=10')
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(body));
}

export function statusPlugin(deps: StatusDeps): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    publicHeaders(app);
    homeRoute(app, deps.env);
    const view = () => deps.source.view();
    for (const [name, file] of Object.entries(STATIC)) {
      app.get(`/status/static/${name}`, async (_req, reply) => reply.type(file.type).header('cache-control', 'public, max-age=300').send(file.body));
    }
    app.get('/status', async (_req, reply) => {
      const v = await view();
      return reply.type('text/html; charset=utf-8').send(publicPage(page({ title: 'Model status' }, statusBody(v)), true));
    });
    const routes: Array<[string, (v: Awaited<ReturnType<typeof view>>) => object]> = [
      ['summary.json', (v) => summaryJson(deps.page, v)],
      ['status.json', (v) => statusJson(deps.page, v)],
      ['components.json', (v) => componentsJson(deps.page, v)],
      ['incidents.json', (v) => incidentsJson(deps.page, v)],
      ['incidents/unresolved.json', (v) => incidentsJson(deps.page, v, true)],
      ['scheduled-maintenances.json', (v) => maintenancesJson(deps.page, v)],
    ];
    for (const [path, make] of routes) app.get(`/status/api/v2/${path}`, async (_req, reply) => json(reply, make(await view())));
    app.get('/trust', async (_req, reply) =>
      reply.type('text/html; charset=utf-8').send(publicPage(page({ title: 'Trust and security' }, trustBody(trustFacts(deps.source.snapshot(), deps.env))))),
    );
    // Checked at start, so a bad SVC_SECURITY_TXT_EXPIRES stops the process instead of failing each request.
    securityTxt(deps.env, Date.now());
    app.get('/.well-known/security.txt', async (_req, reply) => {
      const txt = securityTxt(deps.env, (deps.now ?? Date.now)());
      reply.type('text/plain; charset=utf-8');
      if (!txt) return reply.code(404).send('No security contact is configured (SVC_SECURITY_CONTACT).\n');
      return reply.send(renderSecurityTxt(txt));
    });
    app.get<{ Params: { '*': string } }>('/status/badge/*', async (req, reply) => {
      const name = req.params['*'];
      const model = name.endsWith('.svg') ? name.slice(0, -4) : null;
      const v = await view();
      const m = model === null ? undefined : v.models.find((x) => x.id === model);
      reply.header('cache-control', 'public, max-age=30').type('image/svg+xml; charset=utf-8');
      if (!m) return reply.code(404).send(badgeSvg(model ?? name, 'major_outage', 'unknown model'));
      return reply.send(badgeSvg(m.id, m.state));
    });
  };
}
