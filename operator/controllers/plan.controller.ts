// Plan: Ready renders the compiler's verdict (or says why the spec was not accepted).
import type { Reconciler, ControllerContext } from './context.ts';
import { compiledObjects } from './compiled.ts';
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
    const verdict = parsed.ok ? compiledObjects(this.ctx).verdicts.plans[name] : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    if (verdict) await writeStatus(this.ctx, 'Plan', obj, verdict);
  }
}
