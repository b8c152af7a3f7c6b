// Plan: nothing to resolve, so Ready says whether its spec was accepted.
import type { Reconciler, ControllerContext } from './context.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

export class PlanController implements Reconciler {
  readonly kind = 'Plan' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const obj = this.ctx.caches.Plan.get(name);
    if (!obj) return;
    const parsed = parseCr('Plan', obj);
    const verdict = parsed.ok
      ? { ready: true, reason: 'Accepted', message: `Tier ${parsed.value.spec.tier} is published to the gateways.` }
      : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    await writeStatus(this.ctx, 'Plan', obj, verdict);
  }
}
