// Guardrail: Ready renders the compiler's verdict (served, or why not: a regex that does not compile).
import type { ControllerContext, Reconciler } from './context.ts';
import { compiledObjects } from './compiled.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

export class GuardrailController implements Reconciler {
  readonly kind = 'Guardrail' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const obj = this.ctx.caches.Guardrail.get(name);
    if (!obj) return;
    const parsed = parseCr('Guardrail', obj);
    const verdict = parsed.ok ? compiledObjects(this.ctx).verdicts.guardrails[name] : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    if (verdict) await writeStatus(this.ctx, 'Guardrail', obj, { ready: verdict.ready, reason: verdict.reason, message: verdict.message });
  }
}
