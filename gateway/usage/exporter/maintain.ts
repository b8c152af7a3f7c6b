// Periodic upkeep of the streams: trim what is exported, report lag, forget consumers of dead replicas.
import type { ExporterMetrics } from './metrics.ts';
import { idTime } from './stream-ids.ts';
import type { UsageStreams } from './streams.ts';

/** A consumer with nothing pending, silent this long, was an exporter that is gone. */
const FORGET_CONSUMER_MS = 3_600_000;

export async function maintain(streams: UsageStreams, m: ExporterMetrics, now: number): Promise<void> {
  let lag = 0;
  let pending = 0;
  let oldest = Infinity;
  for (const s of streams.streams) {
    const p = await streams.position(s);
    if (!p) {
      await streams.ensureGroup(s);
      continue;
    }
    lag += p.lag ?? (p.firstUndelivered ? 1 : 0);
    pending += p.pending;
    for (const id of [p.oldestPending, p.firstUndelivered]) if (id) oldest = Math.min(oldest, idTime(id));
    const removed = await streams.trim(p);
    if (removed > 0) m.trimmed.inc(removed);
    await streams.pruneConsumers(s, FORGET_CONSUMER_MS);
  }
  m.lag.set(lag);
  m.pending.set(pending);
  m.oldestSeconds.set(oldest === Infinity ? 0 : Math.max(0, (now - oldest) / 1000));
}
