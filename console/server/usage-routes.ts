// /dashboard/usage and its CSV: both from the same report, for an account the user may view usage of.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { usagePage } from '../pages/usage.ts';
import { toCsv } from '../usage/csv.ts';
import type { GuardrailRow } from '../usage/guardrails.ts';
import { readParams, type UsageParams } from '../usage/params.ts';
import { summarize, type UsageReport } from '../usage/report.ts';
import { accountsWith, Forbidden, queryOf, sendHtml, userOf, type ConsoleDeps } from './context.ts';

async function load(
  deps: ConsoleDeps,
  req: FastifyRequest,
): Promise<{ accounts: string[]; params: UsageParams; report: UsageReport; guardrails: GuardrailRow[]; now: number }> {
  const u = userOf(req);
  const q = queryOf(req);
  const accounts = await accountsWith(deps, u.principal, 'view-usage');
  const account = q.account ?? accounts[0];
  if (account === undefined) throw new Forbidden('You may not view the usage of any account.');
  if (!accounts.includes(account)) throw new Forbidden(`You may not view the usage of account ${account}.`);
  const now = deps.now();
  const params = readParams(q, account, now);
  const range = { accounts: [account], from: params.from, to: params.to };
  const [cells, guardrails] = await Promise.all([deps.usage.cells({ ...range, groupBy: params.groupBy }), deps.usage.guardrails(range)]);
  return { accounts, params, report: summarize(cells, params.from, params.to), guardrails, now };
}

export function usageRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/dashboard/usage', async (req, reply) => {
    const v = await load(deps, req);
    return sendHtml(reply, 200, usagePage({ user: userOf(req), ...v }));
  });

  app.get('/dashboard/usage.csv', async (req, reply) => {
    const v = await load(deps, req);
    const p = v.params;
    const name = `usage-${p.account}-${p.from}-${p.to}-by-${p.groupBy}.csv`.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`).send(toCsv(v.report, p.groupBy));
  });
}
