// Issue 27 item 5: behind an Ingress every sign-in comes from the proxy's address. With SVC_TRUST_PROXY the real
// `npm start` takes the client from X-Forwarded-For as added by the trusted hops only: two clients behind one proxy
// are limited separately, and an X-Forwarded-For sent by a peer that is not a trusted proxy is ignored.
// The "proxy" connects from 127.0.0.1 and the untrusted peer from 127.0.0.2 (both loopback on Linux).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

const TOKEN = 'trust-proxy-test-admin-token-0123456789';
const FROM = { proxy: '127.0.0.1', outsider: '127.0.0.2' };
type From = keyof typeof FROM;

let byCidr: GatewayProcess;
let byHops: GatewayProcess;
let none: GatewayProcess;

beforeAll(async () => {
  [byCidr, byHops, none] = await Promise.all([
    startGatewayProcess({ SVC_CONSOLE_TOKEN: TOKEN, SVC_TRUST_PROXY: '127.0.0.1/32', LOG_LEVEL: 'warn' }),
    startGatewayProcess({ SVC_CONSOLE_TOKEN: TOKEN, SVC_TRUST_PROXY: '1', LOG_LEVEL: 'warn' }),
    startGatewayProcess({ SVC_CONSOLE_TOKEN: TOKEN, LOG_LEVEL: 'warn' }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([byCidr?.stop(), byHops?.stop(), none?.stop()]);
});

/** One HTTP exchange over a connection made from `from`'s address. */
function http(
  url: string,
  from: From,
  o: { method?: string; headers: Record<string, string>; body?: string },
): Promise<{ status: number; cookie: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? 'GET', headers: o.headers, localAddress: FROM[from], agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cookie: String(res.headers['set-cookie'] ?? ''), text }));
    });
    req.once('error', reject);
    req.end(o.body);
  });
}

/** One sign-in attempt (the form's CSRF cookie fetched first, through the same hop); returns the status. */
async function signIn(gw: GatewayProcess, from: From, xff: string | null, token: string): Promise<number> {
  const headers: Record<string, string> = xff === null ? {} : { 'x-forwarded-for': xff };
  const page = await http(`${gw.url}/dashboard/login`, from, { headers });
  const pre = /svc_console_login=([^;]+)/.exec(page.cookie)?.[1] as string;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1] as string;
  const r = await http(`${gw.url}/dashboard/login`, from, {
    method: 'POST',
    headers: { ...headers, cookie: `svc_console_login=${pre}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, token, next: '/dashboard/keys' }).toString(),
  });
  return r.status;
}

async function fails(gw: GatewayProcess, from: From, xff: (i: number) => string | null, n = 5): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await signIn(gw, from, xff(i), `wrong-${i}`));
  return out;
}

describe('SVC_TRUST_PROXY and the console sign-in limit (npm start)', () => {
  it('without it, every client behind one proxy shares the proxy address: one locks the others out (the issue)', async () => {
    expect(await fails(none, 'proxy', () => '203.0.113.1')).toEqual([401, 401, 401, 401, 401]);
    expect(await signIn(none, 'proxy', '203.0.113.2', TOKEN)).toBe(429);
  });

  it('trusting the proxy by address: two clients behind it are limited separately', async () => {
    expect(await fails(byCidr, 'proxy', () => '203.0.113.1')).toEqual([401, 401, 401, 401, 401]);
    expect(await signIn(byCidr, 'proxy', '203.0.113.1', TOKEN)).toBe(429);
    expect(await signIn(byCidr, 'proxy', '203.0.113.2', TOKEN)).toBe(303);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy: it is limited by its own address', async () => {
    // The outsider claims to be client 203.0.113.3, then a new address each time: all count against 127.0.0.2.
    expect(await fails(byCidr, 'outsider', (i) => `203.0.113.${3 + i}`)).toEqual([401, 401, 401, 401, 401]);
    expect(await signIn(byCidr, 'outsider', '203.0.113.99', TOKEN)).toBe(429);
    // The client it pretended to be, behind the real proxy, is not limited.
    expect(await signIn(byCidr, 'proxy', '203.0.113.3', TOKEN)).toBe(303);
  });

  it('by hop count (1 = one Ingress): the entry the proxy added counts, not what the client wrote before it', async () => {
    // The client writes a new X-Forwarded-For each time; the Ingress appends the address it saw (198.51.100.7).
    expect(await fails(byHops, 'proxy', (i) => `10.9.9.${i}, 198.51.100.7`)).toEqual([401, 401, 401, 401, 401]);
    expect(await signIn(byHops, 'proxy', '10.9.9.200, 198.51.100.7', TOKEN)).toBe(429);
    expect(await signIn(byHops, 'proxy', '198.51.100.8', TOKEN)).toBe(303);
  });
});
