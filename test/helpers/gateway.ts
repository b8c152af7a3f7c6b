// Starts the real gateway server in process on 127.0.0.1 from manifests, with the in-memory store.
import type { FastifyInstance } from 'fastify';
import { compile } from '../../gateway/contract/compile.ts';
import type { Snapshot } from '../../gateway/contract/snapshot.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import type { Metrics } from '../../gateway/http/metrics.ts';
import { build, type BuildOptions } from '../../gateway/server.ts';
import type { McpSettings } from '../../gateway/mcp/settings.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { until } from './until.ts';

export interface TestGateway {
  url: string;
  app: FastifyInstance;
  sink: MemoryUsageSink;
  store: MemoryStore;
  snapshot: Snapshot;
  /** Its Prometheus metrics (the in-process gateway has no metrics port). */
  metrics: Metrics;
  close(): Promise<void>;
}

export const TEST_PEPPER = 'test-pepper-not-secret';

export interface GatewayTestOptions {
  bodyLimit?: number;
  mcp?: McpSettings;
  /** The pipeline's clock (default Date.now). */
  now?: () => number;
  /** Stored Responses: where and with what settings (default: memory, 30 days, 64 MiB per account). */
  responses?: BuildOptions['responses'];
  /** Files and batches (default: in memory, the job on). */
  batches?: BuildOptions['batches'];
  /** Where large uploads wait (default: a private directory in the OS's temp dir, past 1 MiB). */
  uploads?: BuildOptions['uploads'];
}

export async function startGateway(docs: object[], opts: GatewayTestOptions = {}): Promise<TestGateway> {
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems));
  const sink = new MemoryUsageSink();
  const store = new MemoryStore(sink);
  await store.applyConfig(result.snapshot, result.keys);
  const { app, metrics } = await build({
    config: { current: () => result.snapshot },
    store,
    pepper: TEST_PEPPER,
    logLevel: 'silent',
    bodyLimit: opts.bodyLimit,
    mcp: opts.mcp,
    now: opts.now,
    responses: opts.responses,
    batches: opts.batches,
    uploads: opts.uploads,
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: address, app, sink, store, snapshot: result.snapshot, metrics, close: () => app.close() };
}

/** Waits until `cond` holds (polling), bounded. */
export function eventually(cond: () => boolean, ms = 5000): Promise<void> {
  return until(cond, ms);
}
