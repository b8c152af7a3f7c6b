// The config controller paces its publishes: after one that took D, the next waits D (its reconcile asks to be run
// again then, writing nothing meanwhile), so a resync of tens of thousands of keys does not publish back to back.
import { describe, expect, it } from 'vitest';
import type { CrKind, CustomObject } from '../kube/clients.ts';
import { ConfigController } from './config.controller.ts';
import type { ControllerContext } from './context.ts';
import { cachesOf, cr } from './test-context.ts';

function contextOf(publishMs: number, publishes: number[]): ControllerContext {
  const objects: Partial<Record<CrKind, CustomObject[]>> = {
    Plan: [cr('Plan', 'pro', { tier: 1 })],
    Account: [cr('Account', 'acme', { planRef: 'pro' })],
  };
  const store = {
    // Never the current version: every reconcile that may publish does.
    currentVersion: async () => null,
    publish: async () => {
      publishes.push(Date.now());
      await new Promise((r) => setTimeout(r, publishMs));
    },
  };
  const log = { info: () => {}, debug: () => {}, warn: () => {}, error: () => {} };
  return { caches: cachesOf(objects), pepper: 'pepper', clients: { namespace: 'team-a' }, store, log } as unknown as ControllerContext;
}

describe('config publishes, paced', () => {
  it('after a publish that took D, a reconcile within D publishes nothing and asks to run again when D has passed', async () => {
    const publishes: number[] = [];
    const c = new ConfigController(contextOf(200, publishes), () => {});
    const t0 = Date.now();
    expect(await c.reconcile()).toBeUndefined();
    const took = Date.now() - t0;
    expect(publishes).toHaveLength(1);
    const again = await c.reconcile();
    expect(publishes).toHaveLength(1);
    expect(again?.requeueAfterMs).toBeGreaterThan(0);
    expect(again?.requeueAfterMs).toBeLessThanOrEqual(took);
    await new Promise((r) => setTimeout(r, (again?.requeueAfterMs ?? 0) + 5));
    expect(await c.reconcile()).toBeUndefined();
    expect(publishes).toHaveLength(2);
    expect((publishes[1] as number) - (publishes[0] as number)).toBeGreaterThanOrEqual(2 * 200);
  });

  it('a publish of a small config waits as little (0 ms: at once)', async () => {
    const publishes: number[] = [];
    const c = new ConfigController(contextOf(0, publishes), () => {});
    await c.reconcile();
    await new Promise((r) => setTimeout(r, 20));
    expect(await c.reconcile()).toBeUndefined();
    expect(publishes).toHaveLength(2);
  });
});
