// Account: its Plan must exist; status shows the balance and this month's spend as the Redis ledger holds them.
import { nanoToUsd } from '../../gateway/contract/money.ts';
import type { Verdict } from './conditions.ts';
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
    const { caches, store, clients } = this.ctx;
    const obj = caches.Account.get(name);
    if (!obj) return;
    const parsed = parseCr('Account', obj);
    let verdict: Verdict;
    if (!parsed.ok) verdict = { ready: false, reason: 'InvalidSpec', message: parsed.message };
    else if (!caches.Plan.get(parsed.value.spec.planRef)) {
      verdict = { ready: false, reason: 'UnknownPlan', message: `Plan ${parsed.value.spec.planRef} does not exist in namespace ${clients.namespace}.` };
    } else verdict = { ready: true, reason: 'Accepted', message: 'The account is published to the gateways.' };
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
