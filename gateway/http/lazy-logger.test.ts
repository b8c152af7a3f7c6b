import Fastify from 'fastify';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from './lazy-logger.ts';

function app(): { app: ReturnType<typeof Fastify>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const a = Fastify({ logger: { level: 'info', stream }, disableRequestLogging: true, childLoggerFactory: lazyChildLogger });
  a.get('/quiet', async () => ({ ok: true }));
  a.get('/talks', async (req) => {
    req.log.info({ step: 1 }, 'hello');
    req.log.child({ part: 'x' }).warn('nested');
    return { ok: true };
  });
  return { app: a, lines };
}

describe('lazy per-request logger', () => {
  it("writes request log lines with the request id, as fastify's own child would", async () => {
    const { app: a, lines } = app();
    const r = await a.inject({ method: 'GET', url: '/talks' });
    expect(r.statusCode).toBe(200);
    expect(lines.map((l) => [l.msg, typeof l.reqId, l.step ?? l.part])).toEqual([
      ['hello', 'string', 1],
      ['nested', 'string', 'x'],
    ]);
    expect(lines[0]?.reqId).toBe(lines[1]?.reqId);
  });

  it('makes no child for a request that does not log', async () => {
    const { app: a } = app();
    let children = 0;
    const child = a.log.child.bind(a.log);
    a.log.child = ((...args: Parameters<typeof child>) => {
      children++;
      return child(...args);
    }) as typeof a.log.child;
    await a.inject({ method: 'GET', url: '/quiet' });
    expect(children).toBe(0);
    await a.inject({ method: 'GET', url: '/talks' });
    expect(children).toBe(2); // the request's child, then the nested child it made (pino children inherit the spy)
  });
});
