// Runs a stage's remote checks over its texts, all at once, each within its own timeout: a block (in config order,
// the first wins) refuses the call; masks rewrite the texts they name (a text two checks both rewrite is refused
// rather than sent half-masked); a check that could not answer fails open (a fact, the call goes on) or closed (the
// call is refused, the guardrail named unavailable). What a completed check cost is added up; nothing sent or found
// leaves here but labels.
import { GatewayError } from '../../errors/catalog.ts';
import type { GuardFact } from '../apply.ts';
import type { TextPlace } from '../text-places.ts';
import type { RemoteCheck } from './policy.ts';
import { serviceOf } from './services.ts';
import { RemoteFailure, type CallMeta, type RemoteText, type ServiceVerdict } from './types.ts';

export interface RemoteStageResult {
  facts: GuardFact[];
  /** The refusal, when a check blocked or failed closed. */
  blocked: GatewayError | null;
  /** What the checks that answered cost (nano-USD). */
  costNano: number;
  /** Some text was rewritten. */
  masked: boolean;
}

type Outcome = { verdict: ServiceVerdict } | { failure: RemoteFailure };

/** The price of one call of a check over `chars` characters: per call plus per 1,000 characters, rounded up. */
export function priceNano(c: RemoteCheck['check'], chars: number): number {
  return c.perCallNano + Math.ceil((c.per1kCharsNano * chars) / 1000);
}

/** Who calls, what stops the checks (the caller leaving), and which texts are tools' results. */
export interface StageContext {
  meta: CallMeta;
  signal: AbortSignal;
  document?: (path: string) => boolean;
}

async function runOne(rc: RemoteCheck, stage: GuardFact['stage'], texts: RemoteText[], ctx: StageContext): Promise<Outcome> {
  const { meta, signal } = ctx;
  if (rc.check.credentialMissing) return { failure: new RemoteFailure('credential', 'its Secret is missing') };
  const timeout = AbortSignal.timeout(rc.check.timeoutMs);
  const both = AbortSignal.any([signal, timeout]);
  try {
    return { verdict: await serviceOf(rc.check)({ guardrail: rc.guardrail, check: rc.check, stage, texts, meta, signal: both }) };
  } catch (err) {
    if (err instanceof RemoteFailure) return { failure: timeout.aborted ? new RemoteFailure('timeout', 'no answer in time') : err };
    // A bug or an unexpected library error: a failure like any other, its text not kept (it may quote the answer).
    return { failure: new RemoteFailure(timeout.aborted ? 'timeout' : 'unavailable', 'failed') };
  }
}

export async function runRemoteStage(
  checks: readonly RemoteCheck[],
  places: readonly TextPlace[],
  stage: GuardFact['stage'],
  ctx: StageContext,
): Promise<RemoteStageResult> {
  const texts: RemoteText[] = places.map((p) => ({ path: p.path, text: p.get(), ...(ctx.document?.(p.path) ? { document: true } : {}) }));
  const chars = texts.reduce((n, t) => n + t.text.length, 0);
  const out: RemoteStageResult = { facts: [], blocked: null, costNano: 0, masked: false };
  if (texts.length === 0 || chars === 0) return out;
  const outcomes = await Promise.all(checks.map((c) => runOne(c, stage, texts, ctx)));
  const changed = new Set<number>();
  const where = stage === 'request' ? 'The request' : 'The answer';
  checks.forEach((rc, i) => {
    const o = outcomes[i]!;
    const fact = (action: GuardFact['action'], kind: string): GuardFact => ({ guardrail: rc.guardrail, check: rc.check.name, action, stage, kind, count: 1 });
    if ('failure' in o) {
      const closed = rc.check.failure === 'closed';
      out.facts.push(fact(closed ? 'block' : 'log', 'unavailable'));
      if (closed)
        out.blocked ??= new GatewayError(
          'content_blocked',
          `${where} was refused: guardrail ${rc.guardrail} is unavailable (check ${rc.check.name}: ${o.failure.reason}) and fails closed.`,
        );
      return;
    }
    out.costNano += priceNano(rc.check, chars);
    const v = o.verdict;
    if (v.action === 'allow') return;
    const action: GuardFact['action'] = rc.check.action === 'log' ? 'log' : v.action;
    for (const k of v.kinds) out.facts.push(fact(action, k));
    if (action === 'log') return;
    if (v.action === 'block' || (v.action === 'mask' && [...v.texts.keys()].some((k) => changed.has(k)))) {
      out.blocked ??= new GatewayError(
        'content_blocked',
        `${where} was blocked by guardrail ${rc.guardrail} (check ${rc.check.name}: ${v.kinds.join(', ')} found).`,
      );
      return;
    }
    if (out.blocked) return;
    for (const [k, text] of v.texts) {
      changed.add(k);
      places[k]?.set(text);
    }
    out.masked = true;
  });
  return out;
}
