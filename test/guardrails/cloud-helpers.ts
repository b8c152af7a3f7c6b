// What the cloud guardrail tests share: a Guardrail manifest over some models, what a check's calls should have
// cost at its price (from the texts the fake service received), and the upstream's calls that were not probes.
import { expect } from 'vitest';
import type { z } from 'zod';
import type { GuardrailCheck, guardrailSpec } from '../../crds/schema/index.ts';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { isProbe } from '../fakes/upstream.ts';

type CheckInput = z.input<typeof guardrailSpec>['checks'][number];

export function guardrail(name: string, models: string[], checks: CheckInput[], extra: Partial<z.input<typeof guardrailSpec>> = {}): object {
  return { apiVersion: 'gateway.svc.dev/v1alpha1', kind: 'Guardrail', metadata: { name }, spec: { selector: { models }, checks, ...extra } };
}

/** The price of the calls a service received, each over the characters it was sent (`text` of each call's texts). */
export function guardrailCostOfChars(price: { perCallUsd: number; per1kCharactersUsd: number }, chars: number[]): number {
  const perCall = Math.round(price.perCallUsd * NANO_PER_USD);
  const per1k = Math.round(price.per1kCharactersUsd * NANO_PER_USD);
  return chars.reduce((n, c) => n + perCall + Math.ceil((per1k * c) / 1000), 0);
}

export function guardrailCost(price: { perCallUsd: number; per1kCharactersUsd: number }, calls: Array<{ body: Record<string, unknown> }>): number {
  const chars = calls.map((c) => ((c.body.texts as Array<{ text: string }>) ?? []).reduce((n, t) => n + t.text.length, 0));
  return guardrailCostOfChars(price, chars);
}

export const userCalls = (up: FakeUpstream) => up.calls.filter((c) => !isProbe(c));

/** A request a guardrail refused leaves exactly one usage event: 400 content_blocked, nothing charged. */
export function expectBlockRecorded(events: readonly UsageEvent[], before: number): void {
  expect(events.length).toBe(before + 1);
  expect(events.at(-1)).toMatchObject({ status: 400, errorCode: 'content_blocked', costNano: 0, inputTokens: 0, outputTokens: 0 });
  expect(events.at(-1)!.guardrailCostNano ?? 0).toBe(0);
}

export type { GuardrailCheck };
