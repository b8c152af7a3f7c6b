// The console as a fastify plugin under /dashboard: encapsulated (its form parser, hooks and error page stay here),
// so mounting it next to the API (standalone) or alone (npm run console) changes nothing for the API routes.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { KeyActionError, refusalStatus } from '../keys/backend.ts';
import { errorPage } from '../pages/login.ts';
import { authRoutes } from './auth-routes.ts';
import { billingRoutes } from './billing-routes.ts';
import { Forbidden, sendHtml, userOf, type ConsoleDeps, type SignedIn } from './context.ts';
import { keyRoutes } from './key-routes.ts';
import { oidcRoutes } from './oidc-routes.ts';
import { securityHooks } from './security.ts';
import { usageRoutes } from './usage-routes.ts';
import { activityRoutes } from './activity-routes.ts';
import { auditHook } from './audit-hook.ts';
import { AuditTrail } from '../audit/trail.ts';
import { MemoryAuditStore } from '../audit/store.ts';

const STATIC = {
  'console.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../static/console.css', import.meta.url)) },
  'console.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../static/console.js', import.meta.url)) },
};

export function consolePlugin(deps: ConsoleDeps): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    securityHooks(app, deps);
    // The audit trail (Activity page): the wiring's (Postgres, Events), else this process's memory.
    const audit = deps.audit ?? new AuditTrail({ store: new MemoryAuditStore(), log: app.log, now: deps.now });
    if (!deps.audit) {
      audit.start();
      app.addHook('onClose', async () => audit.stop());
    }
    auditHook(app, deps, audit);
    app.setErrorHandler(async (err, req, reply) => {
      const user = (req as { consoleUser?: SignedIn }).consoleUser;
      if (err instanceof Forbidden) return sendHtml(reply, 403, errorPage(403, err.message, user));
      // A refused key action (a bad name, a key not in the account, the API server's refusal): its 4xx, never a 500.
      if (err instanceof KeyActionError) {
        const status = refusalStatus(err.refusal);
        return sendHtml(reply, status, errorPage(status, err.message, user));
      }
      const status = (err as { statusCode?: number }).statusCode;
      if (status && status >= 400 && status < 500) return sendHtml(reply, status, errorPage(status, 'The request was not understood.', user));
      req.log.error({ err }, 'Console request failed');
      return sendHtml(reply, 500, errorPage(500, 'Something went wrong on our side. Try again; if it persists, see the console log.', user));
    });
    for (const [name, file] of Object.entries(STATIC)) {
      app.get(`/dashboard/static/${name}`, async (_req, reply) => reply.type(file.type).header('cache-control', 'public, max-age=300').send(file.body));
    }
    authRoutes(app, deps);
    oidcRoutes(app, deps);
    keyRoutes(app, deps);
    usageRoutes(app, deps);
    billingRoutes(app, deps);
    activityRoutes(app, deps, audit);
    // A page of the console that does not exist: the console's 404 page (signed in), not the API's JSON.
    app.get('/dashboard/*', async (req, reply) => sendHtml(reply, 404, errorPage(404, 'There is no such page in the console.', userOf(req))));
  };
}
