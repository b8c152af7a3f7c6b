// Which checks cover a call: the Guardrails whose selector matches its plan, account, key and model, for its endpoint
// and stage, their detectors built once per snapshot.
import { matchesAny } from '../contract/model-match.ts';
import type { CompiledGuardrail, Snapshot } from '../contract/snapshot.ts';
import type { Principal } from '../pipeline/resolve.ts';
import type { Endpoint } from '../usage/event.ts';
import { detectorOf } from './detectors.ts';
import type { Detect } from './types.ts';

export interface ActiveCheck {
  guardrail: string;
  check: string;
  /** What it looks for (the check's detector), for traces. */
  detector: string;
  action: 'block' | 'mask' | 'log';
  restore: boolean;
  detect: Detect;
}

export interface CallGuards {
  request: ActiveCheck[];
  response: ActiveCheck[];
}

const ENDPOINT_NAMES: Partial<Record<Endpoint, CompiledGuardrail['endpoints'][number]>> = {
  'chat.completions': 'chat',
  messages: 'messages',
  responses: 'responses',
  completions: 'completions',
  embeddings: 'embeddings',
  mcp: 'mcp',
};

interface Built {
  g: CompiledGuardrail;
  checks: ActiveCheck[];
}

const built = new WeakMap<Snapshot, Built[]>();

function buildAll(snapshot: Snapshot): Built[] {
  let b = built.get(snapshot);
  if (!b) {
    b = (snapshot.guardrails ?? []).map((g) => ({
      g,
      checks: g.checks.map((c) => ({ guardrail: g.name, check: c.name, detector: c.detector, action: c.action, restore: c.restore, detect: detectorOf(c) })),
    }));
    built.set(snapshot, b);
  }
  return b;
}

const covers = (list: readonly string[] | null, name: string): boolean => list === null || matchesAny(list, name);

/** The guardrail's name for an endpoint it can read (none: it reads no text there). */
export const guardedEndpoint = (endpoint: Endpoint): CompiledGuardrail['endpoints'][number] | undefined => ENDPOINT_NAMES[endpoint];

/** Whether a guardrail covers this call (its endpoint given as the guardrail names it). */
export function coversCall(g: CompiledGuardrail, p: Principal, e: CompiledGuardrail['endpoints'][number], modelId: string): boolean {
  const s = g.selector;
  if (!g.endpoints.includes(e)) return false;
  return covers(s.plans, p.plan.name) && covers(s.accounts, p.account.name) && covers(s.keys, p.key.name) && covers(s.models, modelId);
}

/** The checks of this call, or null when none cover it (the common case: nothing else is done). */
export function guardsFor(snapshot: Snapshot, p: Principal, endpoint: Endpoint, modelId: string): CallGuards | null {
  if (!snapshot.guardrails) return null;
  const e = ENDPOINT_NAMES[endpoint];
  if (!e) return null;
  const out: CallGuards = { request: [], response: [] };
  for (const { g, checks } of buildAll(snapshot)) {
    if (!coversCall(g, p, e, modelId)) continue;
    if (g.stages.includes('request')) out.request.push(...checks);
    if (g.stages.includes('response')) out.response.push(...checks);
  }
  return out.request.length > 0 || out.response.length > 0 ? out : null;
}
