// The usage page's choices, read from and written to the URL (so a view can be shared): UTC days and the grouping.
import type { GroupBy } from './report.ts';

export interface UsageParams {
  account: string;
  from: string;
  to: string;
  groupBy: GroupBy;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function valid(s: string | undefined): s is string {
  return s !== undefined && DAY.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`));
}

export function presets(now: number): Array<{ label: string; from: string; to: string }> {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  return [
    { label: 'Today', from: day(now), to: day(now) },
    { label: 'Last 7 days', from: day(now - 6 * 86_400_000), to: day(now) },
    { label: 'This month', from: day(Date.UTC(y, m, 1)), to: day(now) },
    { label: 'Last month', from: day(Date.UTC(y, m - 1, 1)), to: day(Date.UTC(y, m, 0)) },
  ];
}

/** Defaults: the last 7 days, grouped by key. From after To is swapped; at most 366 days are shown. */
export function readParams(q: Record<string, string | undefined>, account: string, now: number): UsageParams {
  const week = presets(now)[1] as { from: string; to: string };
  let from = valid(q.from) ? q.from : week.from;
  let to = valid(q.to) ? q.to : week.to;
  if (from > to) [from, to] = [to, from];
  const limit = day(Date.parse(`${to}T00:00:00Z`) - 365 * 86_400_000);
  if (from < limit) from = limit;
  const groupBy: GroupBy = q.group === 'task' || q.group === 'model' || q.group === 'kind' ? q.group : 'key';
  return { account, from, to, groupBy };
}

export function query(p: UsageParams): string {
  return new URLSearchParams({ account: p.account, from: p.from, to: p.to, group: p.groupBy }).toString();
}
