// The Activity page's filters from its URL (the CSV link carries the same): scope (an account, or * for the
// console-wide records), action, person, from/to (UTC days, both included), page. A value that cannot be one is an
// error to show (400), never silently dropped.
import { DAY_MS } from './trail.ts';
import { AUDIT_ACTIONS, isAuditAction, type AuditAction } from './record.ts';
import type { AuditFilter } from './store.ts';

/** The scope of the console-wide records (sign-ins, sign-outs) in the URL. */
export const CONSOLE_WIDE = '*';

export interface ActivityParams {
  /** An account, or CONSOLE_WIDE. */
  scope: string;
  action: AuditAction | '';
  actor: string;
  from: string;
  to: string;
  page: number;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function day(s: string): number | null {
  if (!DATE.test(s)) return null;
  const t = Date.parse(`${s}T00:00:00Z`);
  return Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== s ? null : t;
}

export function readActivityParams(q: Record<string, string | undefined>, scope: string): ActivityParams | { error: string } {
  const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
  const action = str(q.action);
  if (action !== '' && !isAuditAction(action)) return { error: `Action must be one of ${AUDIT_ACTIONS.join(', ')}.` };
  const actor = str(q.person);
  if (actor.length > 200) return { error: 'Person is at most 200 characters.' };
  const from = str(q.from);
  const to = str(q.to);
  if (from !== '' && day(from) === null) return { error: 'From must be a date (YYYY-MM-DD).' };
  if (to !== '' && day(to) === null) return { error: 'To must be a date (YYYY-MM-DD).' };
  const page = str(q.page) === '' ? 1 : Number(q.page);
  if (!Number.isInteger(page) || page < 1 || page > 1_000_000) return { error: 'Page must be a whole number from 1.' };
  return { scope, action: action as AuditAction | '', actor, from, to, page };
}

export function filterOf(p: ActivityParams): AuditFilter {
  const from = day(p.from);
  const to = day(p.to);
  return {
    account: p.scope === CONSOLE_WIDE ? '' : p.scope,
    ...(p.action ? { action: p.action } : {}),
    ...(p.actor ? { actor: p.actor } : {}),
    ...(from === null ? {} : { from }),
    ...(to === null ? {} : { to: to + DAY_MS }),
  };
}

/** The URL query of these filters (page left out unless asked). */
export function activityQuery(p: ActivityParams, page?: number): string {
  const q = new URLSearchParams({ account: p.scope });
  if (p.action) q.set('action', p.action);
  if (p.actor) q.set('person', p.actor);
  if (p.from) q.set('from', p.from);
  if (p.to) q.set('to', p.to);
  if (page !== undefined && page > 1) q.set('page', String(page));
  return q.toString();
}
