// Issue 21, item 4: `npm start` listens on 127.0.0.1 unless HOST says otherwise (the demo prints its keys and the
// console's admin token; the metrics list every account's balance). Proven from outside: with HOST unset, the API
// (and the console on it) and the metrics port answer on the loopback address and refuse a connection on another
// address of this machine; with HOST=0.0.0.0 both answer there. `--help` says so.
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { runToExit, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';

/** An IPv4 address of this machine other than loopback: what someone else on the network would connect to. */
function otherAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
  if (!found) throw new Error('This test needs a non-loopback IPv4 address on the machine (any network interface up, e.g. eth0).');
  return found.address;
}

/** GET /healthz on host:port: the status, or the connection error's code. */
function probe(host: string, port: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/healthz', agent: false, timeout: 5000 }, (res) => {
      res.resume();
      resolve(`HTTP ${res.statusCode}`);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

const started: GatewayProcess[] = [];

afterAll(async () => {
  await Promise.all(started.map((g) => g.stop()));
});

async function start(host: string | undefined): Promise<{ api: string; metrics: string }> {
  const gw = await startGatewayProcess({ HOST: host });
  started.push(gw);
  return { api: new URL(gw.url).port, metrics: new URL(gw.metricsUrl).port };
}

describe('npm start: the listen address', () => {
  it('is 127.0.0.1 when HOST is not set: the API and the metrics port refuse connections on another address', async () => {
    const other = otherAddress();
    const gw = await start(undefined);
    expect(started[0]?.output()).toMatch(/svc-gateway listening on http:\/\/127\.0\.0\.1:\d+\nsvc-gateway metrics on http:\/\/127\.0\.0\.1:\d+\/metrics\n/);
    expect(await probe('127.0.0.1', gw.api)).toBe('HTTP 200');
    expect(await probe('127.0.0.1', gw.metrics)).toBe('HTTP 200');
    expect({ api: await probe(other, gw.api), metrics: await probe(other, gw.metrics) }).toEqual({ api: 'ECONNREFUSED', metrics: 'ECONNREFUSED' });
  });

  it('is every interface with HOST=0.0.0.0', async () => {
    const other = otherAddress();
    const gw = await start('0.0.0.0');
    expect({ api: await probe(other, gw.api), metrics: await probe(other, gw.metrics) }).toEqual({ api: 'HTTP 200', metrics: 'HTTP 200' });
  });

  it('is documented in --help', async () => {
    const { code, output } = await runToExit(['--help']);
    expect(code).toBe(0);
    expect(output).toMatch(/HOST\s+listen address of the API and the console \(127\.0\.0\.1: this machine only/);
  });
});
