// The leader's prober: every ModelRoute target probed on its interval (gateway/availability/monitor.ts), states on
// the Redis board for every gateway, history and incidents in Redis for every console, and each ModelRoute's
// status.targets[] and Available condition written after each of its rounds. Only the leader runs it, so two
// operators make one set of probes.
import { Monitor, concurrencyFromEnv, intervalFromEnv } from '../gateway/availability/monitor.ts';
import { RedisBoard } from '../gateway/availability/board.ts';
import { declaredIncidents } from '../gateway/availability/declared.ts';
import { TeeHistory, type History } from '../gateway/availability/history.ts';
import { PostgresHistory } from '../gateway/availability/postgres-history.ts';
import { RedisHistory } from '../gateway/availability/redis-history.ts';
import type { State, TargetStatus } from '../gateway/availability/types.ts';
import type { CompiledModel } from '../gateway/contract/snapshot.ts';
import { ProviderRegistry } from '../gateway/providers/registry.ts';
import { compiledObjects } from './controllers/compiled.ts';
import { conditionsOf, type Condition } from './controllers/conditions.ts';
import type { ControllerContext } from './controllers/context.ts';
import { patchStatus } from './kube/patch.ts';

const REASON: Record<State, string> = {
  operational: 'Operational',
  degraded_performance: 'DegradedPerformance',
  partial_outage: 'PartialOutage',
  major_outage: 'MajorOutage',
  under_maintenance: 'UnderMaintenance',
};

export function availableCondition(
  previous: readonly Condition[] | undefined,
  state: State,
  targets: readonly TargetStatus[],
  generation: number | undefined,
  now: Date,
): Condition[] {
  const status = state === 'operational' || state === 'degraded_performance' ? 'True' : 'False';
  const old = previous?.find((c) => c.type === 'Available');
  const up = targets.filter((t) => t.state !== 'major_outage').length;
  const bad = targets.filter((t) => t.state !== 'operational').map((t) => `${t.target}: ${t.message}`);
  const message =
    `${state.replace(/_/g, ' ')}: ${up} of ${targets.length} target${targets.length === 1 ? '' : 's'} serving${bad.length ? ` (${bad.join('; ')})` : ''}.`.slice(
      0,
      1000,
    );
  return [
    ...(previous ?? []).filter((c) => c.type !== 'Available'),
    {
      type: 'Available',
      status,
      reason: REASON[state],
      message,
      observedGeneration: generation,
      lastTransitionTime: old && old.status === status ? old.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z'),
    },
  ];
}

export interface OperatorProber {
  stop(): Promise<void>;
}

/**
 * Starts probing. History and incidents go to Redis (what every console reads) and, when the operator has
 * DATABASE_URL, to Postgres as well (probe_results, incidents, incident_updates: the record, 90 days of probes).
 */
export async function startProber(ctx: ControllerContext, prefix: string, env: Record<string, string | undefined>): Promise<OperatorProber> {
  const providers = new ProviderRegistry();
  const { redis } = ctx.store;
  const board = new RedisBoard(redis, prefix);
  const redisHistory = new RedisHistory(redis, prefix);
  let history: History = redisHistory;
  if (env.DATABASE_URL) {
    try {
      history = new TeeHistory(redisHistory, await PostgresHistory.open(env.DATABASE_URL));
    } catch (err) {
      // Probing matters more than the record: go on with Redis alone, and say so.
      ctx.log.warn('Availability history not kept in Postgres (cannot reach or migrate it); Redis only', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  // Declared incidents reach the consoles through Redis too (they read no Kubernetes objects for /status).
  let published = '';
  const publishDeclared = async (): Promise<void> => {
    const json = JSON.stringify(declaredIncidents(ctx.caches.Incident.list()));
    if (json === published) return;
    await redisHistory.setDeclared(json);
    published = json;
  };
  const timer = setInterval(
    () => void publishDeclared().catch((err: unknown) => ctx.log.warn('Declared incidents not published yet', { error: String(err) })),
    2_000,
  );
  timer.unref();
  void publishDeclared().catch(() => {});
  const iso = (ms: number | null): string | undefined => (ms === null ? undefined : new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z'));
  const writeRoute = async (m: CompiledModel, targets: readonly TargetStatus[], state: State): Promise<void> => {
    ctx.log.info('Probed ModelRoute targets', { model: m.id, state, targets: targets.map((t) => `${t.target}=${t.state}`).join(',') });
    for (const obj of ctx.caches.ModelRoute.list()) {
      const spec = obj.spec as { model?: string } | undefined;
      const name = obj.metadata?.name ?? '';
      if ((spec?.model ?? name) !== m.id) continue;
      await patchStatus(ctx.clients, 'ModelRoute', name, {
        targets: targets.map((t) => ({
          name: t.target,
          state: t.state,
          lastProbeTime: iso(t.lastProbe),
          latencyMs: t.latencyMs ?? undefined,
          message: t.message.slice(0, 1000),
        })),
        conditions: availableCondition(conditionsOf(obj.status), state, targets, obj.metadata?.generation, ctx.now()),
      });
    }
  };
  const monitor = new Monitor({
    snapshot: () => compiledObjects(ctx).snapshot,
    providers,
    board,
    history,
    intervalSeconds: intervalFromEnv(env),
    concurrency: concurrencyFromEnv(env),
    declared: () => declaredIncidents(ctx.caches.Incident.list()),
    onRound: writeRoute,
    onError: (err) => ctx.log.warn('Availability probe round failed', { error: err instanceof Error ? err.message : String(err) }),
  }).start();
  return {
    async stop() {
      clearInterval(timer);
      await monitor.stop();
      await providers.close();
      await history.close();
    },
  };
}
