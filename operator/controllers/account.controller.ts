// Account: Ready renders the compiler's verdict; status shows the balance and this month's spend as the Redis
// ledger holds them.
import { nanoToUsd } from '../../gateway/contract/money.ts';
import type { Verdict } from './conditions.ts';
import { compiled } from './compiled.ts';
import type { ControllerContext, Reconciler } from './context.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

const round = (usd: number): number => Math.round(usd * 1e6) / 1e6;

export class AccountController implements Reconciler {
  readonly kind = 'Account' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const { caches, store } = this.ctx;
    const obj = caches.Account.get(name);
    if (!obj) return;
    const parsed = parseCr('Account', obj);
    const verdict: Verdict | undefined = parsed.ok
      ? compiled(this.ctx).verdicts.accounts[name]
      : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    if (!verdict) return;
    const ledger = await store.ledger(name);
    const view = await store.view(name, '', this.ctx.now().getTime());
    // Before its first publish an account has no ledger: show nothing rather than a zero balance.
    const known = ledger.creditedNano > 0 || ledger.spentNano > 0;
    await writeStatus(this.ctx, 'Account', obj, verdict, {
      balanceUsd: known ? round(nanoToUsd(ledger.creditedNano - ledger.spentNano)) : null,
      monthSpendUsd: known ? round(nanoToUsd(view.accountMonthSpendNano)) : null,
    });
  }
}
