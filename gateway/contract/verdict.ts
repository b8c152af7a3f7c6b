// What compile() says about each object: whether the gateways serve it, and why not. The operator renders these
// into Ready conditions as they are; no controller judges an object on its own.

export interface Verdict {
  /** Nothing to report: the object is served exactly as written. */
  ready: boolean;
  /** The gateways serve it (an account or route: it takes calls; a key: its record is published). */
  served: boolean;
  /** CamelCase and stable (Accepted, UnknownPlan, MissingSecret, ...): the condition's reason. */
  reason: string;
  /** A sentence naming what is missing: the condition's message. */
  message: string;
}

export interface TargetVerdict extends Verdict {
  name: string;
}

export interface RouteVerdict extends Verdict {
  /** One per spec.targets entry, in spec order. */
  targets: TargetVerdict[];
}

/** By object name, one table per kind. */
export interface Verdicts {
  plans: Record<string, Verdict>;
  accounts: Record<string, Verdict>;
  apiKeys: Record<string, Verdict>;
  modelRoutes: Record<string, RouteVerdict>;
  mcpServers: Record<string, Verdict>;
  guardrails: Record<string, Verdict>;
}

export const accepted = (message: string): Verdict => ({ ready: true, served: true, reason: 'Accepted', message });

/** " in namespace x" when the compile was told where the objects live, else nothing. */
export const inScope = (scope: string | undefined): string => (scope ? ` in ${scope}` : '');
