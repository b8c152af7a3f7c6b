// Markers of a Redis Cluster's hash slots: one small key per slot (<p>:money:slot:{<tag>}, 16,384 of them), written
// with the generation marker once the money state is complete. A shard that lost its data (a master without a
// replica restarted empty, or replaced by an empty node) lost its slots' markers while the others kept theirs, so:
//   - a key record missing from Redis is told from an unknown key by its own slot's marker (503, not 401);
//   - the money guard's periodic check reads one marker per slot range (CLUSTER SLOTS) and repairs a shard that lost
//     its data, with no call needed to notice it; the same reply names each range's master, so a replica promoted
//     since the last check is noticed too (its accounts are checked against the ledger: money-catch-up.ts).
import { Cluster } from 'ioredis';
import { redisKeys } from '../contract/redis-keys.ts';
import type { RedisClient } from './redis-connect.ts';

export const SLOTS = 16384;

/** CRC16/XMODEM, as Redis Cluster computes a key's slot. */
function crc16(s: string): number {
  let crc = 0;
  for (const byte of Buffer.from(s, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The hash slot of a key (its {tag} when it has a non-empty one). */
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) % SLOTS;
  }
  return crc16(key) % SLOTS;
}

let tags: string[] | null = null;

/** A short hash tag for each slot (found once: the first base-36 strings that land in each). */
function tagOf(slot: number): string {
  if (!tags) {
    const found: string[] = new Array<string>(SLOTS);
    let left = SLOTS;
    for (let i = 0; left > 0; i++) {
      const t = i.toString(36);
      const s = crc16(t) % SLOTS;
      if (found[s] === undefined) {
        found[s] = t;
        left--;
      }
    }
    tags = found;
  }
  return tags[slot] as string;
}

/** The marker of `slot`. */
export function slotMarker(prefix: string, slot: number): string {
  return redisKeys(prefix).moneySlot(tagOf(slot));
}

/** Commands per round trip when the markers are written (one pipeline per shard and slice). */
const SLICE = 1024;

/**
 * Writes every slot's marker (only on a Redis Cluster: one Redis keeps or loses everything together): one pipeline
 * per slice of each slot range, sent to the range's master, so 16,384 markers take about 16 round trips.
 */
export async function writeSlotMarkers(redis: RedisClient, prefix: string, generation: string): Promise<void> {
  if (!(redis instanceof Cluster)) return;
  const ranges = (await redis.cluster('SLOTS')) as unknown as Array<[number, number]>;
  // The shards in parallel, the slices of each one after the other (a busy Cluster keeps answering others meanwhile).
  await Promise.all(
    ranges.map(async ([start, end]) => {
      for (let a = start; a <= end; a += SLICE) {
        const p = redis.pipeline();
        for (let slot = a; slot <= Math.min(a + SLICE - 1, end); slot++) p.set(slotMarker(prefix, slot), generation);
        for (const [err] of (await p.exec()) ?? []) if (err) throw err;
      }
    }),
  );
}

/** False when the key's slot lost its data (its marker is gone); true on one Redis, or when the marker is there. */
export async function slotKept(redis: RedisClient, prefix: string, key: string): Promise<boolean> {
  if (!(redis instanceof Cluster)) return true;
  return (await redis.get(slotMarker(prefix, slotOf(key)))) !== null;
}

export interface SlotLayout {
  /** A slot range whose marker is gone: its shard lost its data. */
  lost: boolean;
  /** Each range and its master's node id: it changes when a replica is promoted. */
  masters: string;
}

/** The Cluster's slot ranges, and whether each kept its marker; null on one Redis. */
export async function slotLayout(redis: RedisClient, prefix: string): Promise<SlotLayout | null> {
  if (!(redis instanceof Cluster)) return null;
  const ranges = (await redis.cluster('SLOTS')) as unknown as Array<[number, number, [string, number, string?]]>;
  ranges.sort((a, b) => a[0] - b[0]);
  const kept = await Promise.all(ranges.map(async ([start]) => (await redis.get(slotMarker(prefix, start))) !== null));
  return { lost: kept.includes(false), masters: ranges.map(([a, b, m]) => `${a}-${b}:${m[2] ?? `${m[0]}:${m[1]}`}`).join(',') };
}
