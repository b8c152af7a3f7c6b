// ModelRoute: Ready renders the compiler's verdict: a target whose credentials are missing is left out of the
// snapshot (the message names it and says how many targets still serve), a model id another route publishes,
// an unknown fallback.
import type { ControllerContext, Reconciler } from './context.ts';
import { compiledObjects } from './compiled.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

export class ModelRouteController implements Reconciler {
  readonly kind = 'ModelRoute' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const obj = this.ctx.caches.ModelRoute.get(name);
    if (!obj) return;
    const parsed = parseCr('ModelRoute', obj);
    const verdict = parsed.ok ? compiledObjects(this.ctx).verdicts.modelRoutes[name] : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    if (verdict) await writeStatus(this.ctx, 'ModelRoute', obj, { ready: verdict.ready, reason: verdict.reason, message: verdict.message });
  }
}
