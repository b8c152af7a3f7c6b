// Reliability case 16, one Redis: a primary with one replica, the gateways reaching it through a TCP proxy (what a
// Kubernetes Service is to them). The primary is SIGKILLed under traffic from 3 gateway processes; an operator
// promotes the replica by hand (REPLICAOF NO ONE) and points the Service at it. Reports the same figures as the
// Cluster failover test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { BUDGET_NANO, RPM, s, trafficThrough } from '../helpers/failover-traffic.ts';
import { fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { freePort } from '../helpers/host.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';

/** A TCP forwarder whose target can be moved; moving it cuts the connections it carries (as a Service's endpoints change). */
async function proxy(target: number): Promise<{ port: number; moveTo(port: number): void; close(): Promise<void> }> {
  let to = target;
  const pairs = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(to, '127.0.0.1');
    pairs.add(client);
    pairs.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      pairs.delete(client);
      pairs.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    port,
    moveTo: (p) => {
      to = p;
      for (const sock of pairs) sock.destroy();
    },
    close: () =>
      new Promise((r) => {
        for (const sock of pairs) sock.destroy();
        server.close(() => r());
      }),
  };
}

async function startReplica(primaryPort: number): Promise<{ port: number; child: ChildProcess; client: Redis; dir: string }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-replica-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--replicaof',
      '127.0.0.1',
      String(primaryPort),
      '--repl-diskless-sync-delay',
      '0',
      '--loglevel',
      'warning',
    ],
    { stdio: 'ignore' },
  );
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: (n) => Math.min(50 * n, 500) });
  client.on('error', () => {});
  const end = Date.now() + 20_000;
  for (;;) {
    const info = await client.info('replication').catch(() => '');
    if (info.includes('master_link_status:up')) break;
    if (Date.now() > end) throw new Error(`the replica did not sync: ${info}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, child, client, dir };
}

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
});

describe('one Redis with one replica, promoted by hand, under traffic from 3 gateways', () => {
  it('fails calls fast with 503 until the Service points at the promoted replica; nothing charged twice, no cap exceeded', async () => {
    const primary: TestRedis = await startRedis('promotion', { own: true });
    cleanup.push(() => primary.stop());
    const replica = await startReplica(Number(new URL(primary.url).port));
    cleanup.push(async () => {
      replica.client.disconnect();
      replica.child.kill('SIGTERM');
      rmSync(replica.dir, { recursive: true, force: true });
    });
    const svc = await proxy(Number(new URL(primary.url).port));
    cleanup.push(() => svc.close());
    const redis = { url: `redis://127.0.0.1:${svc.port}`, prefix: primary.prefix };
    const fleet: Fleet = await startFleet(3, redis, s.docs, { SVC_REDIS_TIMEOUT_MS: '500', SVC_HOLD_TTL_SECONDS: '8' });
    cleanup.push(() => fleet.stop());
    const store: RedisStore = await fleetStore(redis);
    cleanup.push(() => store.close());
    const f = await trafficThrough('one Redis, replica promoted by hand 1 s after the primary was killed', {
      urls: fleet.urls,
      store,
      holdTtlMs: 8_000,
      fault: async () => {
        await primary.kill();
        await new Promise((r) => setTimeout(r, 1000)); // someone notices
        await replica.client.replicaof('NO', 'ONE');
        svc.moveTo(replica.port);
      },
    });
    expect(f.maxMs).toBeLessThan(5_000);
    expect(f.failedOther).toBe(0);
    expect(f.duplicated).toBe(0);
    expect(f.ledgerMinusEvents).toBe(0);
    expect(f.chargedWithoutAnswer).toBe(0);
    expect(f.rpmAccepted).toBeLessThanOrEqual(RPM);
    expect(f.budgetSpentNano).toBeLessThanOrEqual(BUDGET_NANO);
    expect(f.openHoldsAfterTtl).toBe(0);
  }, 120_000);
});
