// What a remote check is given and answers. A service module (one per service) turns the texts into its own wire
// request and its answer into a verdict; the runner (run-stage.ts) adds the timeout, the failure mode and the price.
import type { CompiledRemoteCheck } from '../../contract/snapshot.ts';

export interface RemoteText {
  /** Where the text is ("messages[1].content"); sent to the webhook, never logged. */
  path: string;
  text: string;
  /** A tool's result (a tool message, a tool_result block, a function_call_output): what Prompt Shields calls a document. */
  document?: boolean;
}

/** Who is calling and where (the webhook's request carries it; names only, never a key). */
export interface CallMeta {
  endpoint: string;
  dialect: string;
  model: string;
  account: string;
  apiKey: string;
}

export interface ServiceInput {
  guardrail: string;
  check: CompiledRemoteCheck;
  stage: 'request' | 'response';
  texts: readonly RemoteText[];
  meta: CallMeta;
  signal: AbortSignal;
}

/**
 * allow: nothing found; block: found what the check refuses (kinds: the service's categories, bounded labels);
 * mask: the service rewrote some texts (by index into the texts given).
 */
export type ServiceVerdict = { action: 'allow' } | { action: 'block'; kinds: string[] } | { action: 'mask'; kinds: string[]; texts: Map<number, string> };

export type Service = (input: ServiceInput) => Promise<ServiceVerdict>;

/** A service that could not give a verdict: unreachable, timed out, refused the credential, answered garbage. */
export class RemoteFailure extends Error {
  readonly reason: 'timeout' | 'unavailable' | 'bad_answer' | 'credential';
  constructor(reason: RemoteFailure['reason'], message: string) {
    super(message);
    this.reason = reason;
  }
}

/** A category as a label: lowercase, a bounded alphabet and length (a webhook's answer is not trusted with more). */
export function label(s: string): string {
  const l = s
    .toLowerCase()
    .replace(/[^a-z0-9/_:-]+/g, '-')
    .slice(0, 40);
  return l === '' ? 'flagged' : l;
}
