// A gateway in process with availability as the standalone process has it (probes, board, health, /status), from
// manifests; rounds are driven by the test (monitor.round) unless `start` is set.
import type { FastifyInstance } from 'fastify';
import { localAvailability, type LocalAvailability } from '../../gateway/availability/standalone.ts';
import { compile } from '../../gateway/contract/compile.ts';
import type { CompiledModel, Snapshot } from '../../gateway/contract/snapshot.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import type { RedisClient } from '../../gateway/state/redis-connect.ts';
import { build } from '../../gateway/server.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { mountStatusPages } from '../../console/status/mount.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';

export interface AvailabilityGateway {
  url: string;
  app: FastifyInstance;
  sink: MemoryUsageSink;
  store: MemoryStore;
  snapshot: Snapshot;
  avail: LocalAvailability;
  model(id: string): CompiledModel;
  /** One probe round of each named model, then the gateway's view refreshed. */
  rounds(n: number, ...models: string[]): Promise<void>;
  close(): Promise<void>;
}

export async function startAvailabilityGateway(
  docs: object[],
  o: { env?: Record<string, string>; pagesEnv?: Record<string, string>; start?: boolean; redis?: { client: RedisClient; prefix: string } } = {},
): Promise<AvailabilityGateway> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems));
  const sink = new MemoryUsageSink();
  const store = new MemoryStore(sink);
  await store.applyConfig(result.snapshot, result.keys);
  const { app, deps } = await build({ config: { current: () => result.snapshot }, store, pepper: TEST_PEPPER, logLevel: 'silent' });
  const avail = localAvailability({ snapshot: () => result.snapshot, env: o.env ?? {}, start: o.start ?? false, redis: o.redis });
  deps.availability = avail.health;
  await mountStatusPages(app, { source: avail.source, env: o.pagesEnv ?? {} });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const model = (id: string): CompiledModel => {
    const m = result.snapshot.models[id];
    if (!m) throw new Error(`no model ${id}`);
    return m;
  };
  return {
    url,
    app,
    sink,
    store,
    snapshot: result.snapshot,
    avail,
    model,
    async rounds(n, ...models) {
      for (let i = 0; i < n; i++) await Promise.all(models.map((m) => avail.monitor.round(model(m))));
      await avail.health.refresh();
    },
    async close() {
      await avail.close();
      await app.close();
    },
  };
}
