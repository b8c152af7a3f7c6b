// Account: Ready renders the compiler's verdict. Balance and this month's spend in status come from the leader's
// spend refresh (spend-status.ts), on its cadence, not from reconciles.
import type { Verdict } from './conditions.ts';
import { compiledObjects } from './compiled.ts';
import type { ControllerContext, Reconciler } from './context.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

export class AccountController implements Reconciler {
  readonly kind = 'Account' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const { caches } = this.ctx;
    const obj = caches.Account.get(name);
    if (!obj) return;
    const parsed = parseCr('Account', obj);
    const verdict: Verdict | undefined = parsed.ok
      ? compiledObjects(this.ctx).verdicts.accounts[name]
      : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    if (!verdict) return;
    await writeStatus(this.ctx, 'Account', obj, verdict);
  }
}
