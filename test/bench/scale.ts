// npm run bench -- --scale: the cost curves, each a table: a call against the keys in Redis and against the
// ModelRoutes, against the prompt's size, the gateway's memory against open streams, the operator against the number
// of ApiKeys (a real API server), and gateway processes on one Redis. A curve that cannot run (a component missing)
// prints why in place of its table, and the run ends with a failure.
import { operatorCurve } from './scale-operator.ts';
import { promptCurve } from './scale-prompt.ts';
import { replicasCurve } from './scale-replicas.ts';
import { routesCurve } from './scale-routes.ts';
import { keysCurve } from './scale-keys.ts';
import { streamsCurve } from './scale-streams.ts';
import type { Proc } from './procs.ts';
import type { Bounds } from './scale-common.ts';
import { upstream } from './subjects.ts';

export const CURVES = ['keys', 'routes', 'prompt', 'streams', 'replicas', 'operator'] as const;
export type Curve = (typeof CURVES)[number];

const RUN: Record<Curve, (up: Proc, b: Bounds, log: (l: string) => void) => Promise<string>> = {
  keys: keysCurve,
  routes: routesCurve,
  prompt: promptCurve,
  streams: streamsCurve,
  replicas: replicasCurve,
  operator: (_up, b, log) => operatorCurve(b, log),
};

export async function scale(curves: readonly Curve[], b: Bounds, log: (l: string) => void): Promise<{ text: string; failed: number }> {
  const parts: string[] = [];
  let failed = 0;
  for (const curve of curves) {
    const t = Date.now();
    // A fresh upstream per curve: the streams curve leaves thousands of closed sockets behind it.
    const up = await upstream();
    try {
      parts.push(await RUN[curve](up, b, log));
    } catch (err) {
      failed++;
      parts.push(`### ${curve}: not measured\n\n${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await up.stop();
    }
    log(`${curve}: ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  return { text: parts.join('\n\n'), failed };
}
