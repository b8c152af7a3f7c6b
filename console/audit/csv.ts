// The Activity page's records as CSV (RFC 4180: quoted when needed, CRLF rows). A cell a spreadsheet would run as a
// formula (starting with = + - @, or a tab or carriage return) gets a leading apostrophe, as OWASP advises, so opening
// the file never runs what a person typed as their name or a provider put in a claim.
import type { AuditRecord } from './record.ts';

const HEADER = ['time_utc', 'account', 'person', 'subject', 'method', 'action', 'object', 'outcome', 'status', 'detail', 'client_ip', 'user_agent'];

export function csvCell(v: string | number): string {
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function auditCsv(rows: AuditRecord[]): string {
  const lines = [HEADER.join(',')];
  for (const r of rows) {
    lines.push(
      [new Date(r.at).toISOString(), r.account, r.actor, r.subject, r.method, r.action, r.object, r.outcome, r.status, r.detail, r.clientIp, r.userAgent]
        .map(csvCell)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
