// The public pages in the cluster's console process: models from the snapshot the operator published (read from
// Redis every few seconds), states, history and incidents from the Redis keys the operator's leader writes.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { RedisClient } from '../../gateway/state/redis-connect.ts';
import { clusterStatusSource } from '../../gateway/availability/cluster-source.ts';
import { decodeSnapshot, readCurrentVersion, readSnapshot } from '../../gateway/contract/config-channel.ts';
import { SNAPSHOT_SCHEMA, type Snapshot } from '../../gateway/contract/snapshot.ts';
import { mountStatusPages } from './mount.ts';

const EMPTY: Snapshot = { schema: SNAPSHOT_SCHEMA, version: '', plans: {}, accounts: {}, models: {} };

export async function mountClusterStatus(
  app: FastifyInstance,
  o: { redis: RedisClient; prefix: string; env: Record<string, string | undefined> },
): Promise<{ close(): void }> {
  let snap = EMPTY;
  const refresh = async (): Promise<void> => {
    // A Cluster client answers GET as a single client does.
    const redis = o.redis as Redis;
    const v = await readCurrentVersion(redis, o.prefix);
    if (!v || v === snap.version) return;
    const raw = await readSnapshot(redis, o.prefix, v);
    const d = raw ? decodeSnapshot(raw, v) : null;
    if (d?.ok) snap = d.snapshot;
  };
  const warn = (err: unknown): void => app.log.warn({ err }, 'Status pages: Redis not read');
  await refresh().catch(warn);
  const timer = setInterval(() => void refresh().catch(warn), 3_000);
  timer.unref();
  const source = clusterStatusSource({ redis: o.redis, prefix: o.prefix, snapshot: () => snap, env: o.env, onError: warn });
  await mountStatusPages(app, { source, env: o.env });
  return {
    close: () => {
      clearInterval(timer);
      source.close();
    },
  };
}
