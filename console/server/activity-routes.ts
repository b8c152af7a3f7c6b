// /dashboard/activity and its CSV: for an account the person may `view-activity` on (asked on every request), or
// the console-wide records (sign-ins) for one who may on every account (a Role without resourceNames; "*" in the
// access file). Both answer from the same filters; the CSV holds every record they match (up to CSV_MAX).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { auditCsv } from '../audit/csv.ts';
import { CONSOLE_WIDE, filterOf, readActivityParams, type ActivityParams } from '../audit/params.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { activityPage, ACTIVITY_PAGE_SIZE } from '../pages/activity.ts';
import { errorPage } from '../pages/login.ts';
import { accountsWith, Forbidden, queryOf, sendHtml, userOf, type ConsoleDeps } from './context.ts';

const CSV_MAX = 100_000;

async function scopes(deps: ConsoleDeps, req: FastifyRequest): Promise<string[]> {
  const p = userOf(req).principal;
  // The empty name asks about every account at once, as a SubjectAccessReview reads it.
  const [accounts, all] = await Promise.all([accountsWith(deps, p, 'view-activity'), deps.authz.allowed(p, 'view-activity', '')]);
  return all ? [...accounts, CONSOLE_WIDE] : accounts;
}

async function load(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<{ scopes: string[]; params: ActivityParams } | null> {
  const may = await scopes(deps, req);
  const asked = queryOf(req).account;
  const scope = asked === undefined || asked === '' ? may[0] : asked;
  if (scope === undefined) throw new Forbidden('You may not see the activity of any account. Ask your platform team for the view-activity verb on accounts.');
  if (!may.includes(scope)) {
    throw new Forbidden(
      scope === CONSOLE_WIDE
        ? 'You may not see the console-wide sign-ins: that takes view-activity on every account.'
        : `You may not see the activity of account ${scope}.`,
    );
  }
  const params = readActivityParams(queryOf(req), scope);
  if ('error' in params) {
    sendHtml(reply, 400, errorPage(400, params.error, userOf(req)));
    return null;
  }
  return { scopes: may, params };
}

export function activityRoutes(app: FastifyInstance, deps: ConsoleDeps, trail: AuditTrail): void {
  app.get('/dashboard/activity', async (req, reply) => {
    const v = await load(deps, req, reply);
    if (!v) return reply;
    const records = await trail.query(filterOf(v.params), (v.params.page - 1) * ACTIVITY_PAGE_SIZE, ACTIVITY_PAGE_SIZE);
    return sendHtml(reply, 200, activityPage({ user: userOf(req), ...v, records, retentionDays: trail.retentionDays, storedIn: trail.store.kind }));
  });

  app.get('/dashboard/activity.csv', async (req, reply) => {
    const v = await load(deps, req, reply);
    if (!v) return reply;
    const { rows } = await trail.query(filterOf(v.params), 0, CSV_MAX);
    const p = v.params;
    const name = `activity-${p.scope === CONSOLE_WIDE ? 'console' : p.scope}${p.from ? `-${p.from}` : ''}${p.to ? `-${p.to}` : ''}.csv`.replace(
      /[^A-Za-z0-9._-]/g,
      '_',
    );
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`).send(auditCsv(rows));
  });
}
