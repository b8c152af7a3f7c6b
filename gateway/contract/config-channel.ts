// How the compiled config travels from the operator (the only writer in cluster mode) to every gateway replica.
// Redis only, no Kubernetes: both sides import this file and nothing of each other.
//
// Keys (<p> = prefix, default "svc"; the names live in redis-keys.ts):
//   <p>:config:snapshots:<version>  STRING  canonical JSON of one snapshot; content-addressed (version = content hash),
//                                           so it never changes once written
//   <p>:config:current              STRING  the version gateways serve; moved only after the snapshot, the key records
//                                           and the credits it relies on are in Redis (RedisStore.applyConfig)
//   <p>:config:history              LIST    versions published, newest first; snapshots beyond the last KEEP are deleted
// Channel:
//   <p>:config:changed              the new version, published right after `current` moves. A gateway that misses
//                                   the message (reconnecting) catches up by polling `current` every few seconds.
// A reader that finds a snapshot whose `schema` it does not understand keeps serving its last good one.
import type { RedisClient as Redis } from '../state/redis-connect.ts';
import { canonicalJson } from './canonical-json.ts';
import { redisKeys } from './redis-keys.ts';
import { SNAPSHOT_SCHEMA, snapshot as snapshotSchema, type Snapshot } from './snapshot.ts';

/** Snapshots kept for readers that saw `current` just before it moved. */
export const KEEP_SNAPSHOTS = 10;

export interface ConfigKeys {
  current: string;
  history: string;
  channel: string;
  snapshot: (version: string) => string;
}

export function configKeys(prefix: string): ConfigKeys {
  const k = redisKeys(prefix);
  return { current: k.configCurrent, history: k.configHistory, channel: k.configChannel, snapshot: k.configSnapshot };
}

/**
 * Writes the snapshot, moves `current` to it and announces it. Idempotent: the same snapshot twice changes nothing.
 * One command per key, in this order (the snapshot before `current`, `current` before the announcement), never a
 * MULTI across keys: in a Redis Cluster these keys live in different hash slots.
 */
export async function publishSnapshot(redis: Redis, prefix: string, snap: Snapshot): Promise<void> {
  const k = configKeys(prefix);
  const v = snap.version;
  await redis.set(k.snapshot(v), canonicalJson(snap));
  // One key: a MULTI on it is fine in a Cluster too.
  await redis.multi().lrem(k.history, 0, v).lpush(k.history, v).exec();
  await redis.set(k.current, v);
  await redis.publish(k.channel, v);
  const old = await redis.lrange(k.history, KEEP_SNAPSHOTS, -1);
  if (old.length === 0) return;
  await redis.ltrim(k.history, 0, KEEP_SNAPSHOTS - 1);
  for (const x of old) if (x !== v) await redis.del(k.snapshot(x));
}

/** The version gateways should serve, or null before the first publish. */
export function readCurrentVersion(redis: Redis, prefix: string): Promise<string | null> {
  return redis.get(configKeys(prefix).current);
}

/** The raw snapshot of one version, or null if it is gone (trimmed) or was never written. */
export function readSnapshot(redis: Redis, prefix: string, version: string): Promise<string | null> {
  return redis.get(configKeys(prefix).snapshot(version));
}

export type Decoded = { ok: true; snapshot: Snapshot } | { ok: false; reason: string };

/** Parses a published snapshot; anything this build does not understand is refused with a reason, never thrown. */
export function decodeSnapshot(raw: string, expectedVersion?: string): Decoded {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    return { ok: false, reason: 'the snapshot is not JSON' };
  }
  const schema = typeof doc === 'object' && doc !== null ? (doc as { schema?: unknown }).schema : undefined;
  if (schema !== SNAPSHOT_SCHEMA) {
    return { ok: false, reason: `snapshot schema ${JSON.stringify(schema)} is not understood (this gateway reads schema ${SNAPSHOT_SCHEMA})` };
  }
  const parsed = snapshotSchema.safeParse(doc);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { ok: false, reason: `the snapshot does not match schema ${SNAPSHOT_SCHEMA}: ${first?.path.join('.') ?? ''} ${first?.message ?? ''}`.trim() };
  }
  if (expectedVersion !== undefined && parsed.data.version !== expectedVersion) {
    return { ok: false, reason: `the snapshot stored under version ${expectedVersion} says it is ${parsed.data.version}` };
  }
  return { ok: true, snapshot: parsed.data };
}
