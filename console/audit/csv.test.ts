import { describe, expect, it } from 'vitest';
import { auditCsv, csvCell } from './csv.ts';

describe('audit CSV', () => {
  it.each([
    ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
    ['+1+2', "'+1+2"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
    ['alice@example.com', 'alice@example.com'],
    ['a,b', '"a,b"'],
    ['line\nbreak', '"line\nbreak"'],
    [201, '201'],
  ])('writes %j as %j', (v, out) => {
    expect(csvCell(v)).toBe(out);
  });

  it('writes a header and one CRLF row per record', () => {
    const csv = auditCsv([
      {
        at: Date.UTC(2026, 0, 2, 3, 4, 5),
        account: 'demo',
        actor: '=1+1',
        subject: 'sub-1',
        method: 'oidc',
        action: 'key-created',
        object: 'k1',
        outcome: 'success',
        status: 201,
        detail: '',
        clientIp: '192.0.2.1',
        userAgent: 'Mozilla/5.0',
      },
    ]);
    expect(csv.split('\r\n')).toEqual([
      'time_utc,account,person,subject,method,action,object,outcome,status,detail,client_ip,user_agent',
      "2026-01-02T03:04:05.000Z,demo,'=1+1,sub-1,oidc,key-created,k1,success,201,,192.0.2.1,Mozilla/5.0",
      '',
    ]);
  });
});
