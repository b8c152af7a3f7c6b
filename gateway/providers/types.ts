// What every provider offers the pipeline: send one request in its own wire protocol, report the outcome.
import type { CompiledTarget } from '../contract/snapshot.ts';

export type Protocol = 'openai' | 'anthropic';
export type Operation = 'chat' | 'embeddings' | 'messages' | 'count_tokens' | 'responses';

export interface UpstreamCall {
  target: CompiledTarget;
  operation: Operation;
  /** Serialized request body in the provider's protocol. */
  body: string;
  stream: boolean;
  /** Protocol headers passed through (anthropic-version, anthropic-beta). */
  headers: Record<string, string>;
  signal: AbortSignal;
}

export type UpstreamOutcome =
  | { kind: 'json'; status: number; body: string }
  | { kind: 'stream'; status: number; body: AsyncIterable<Uint8Array | string> }
  | { kind: 'error'; status: number; body: string; retryAfter: string | undefined };

/** A failure before any answer: the connection could not be made or a timeout struck. */
export class UpstreamFailure extends Error {
  readonly reason: 'timeout' | 'connect_error';
  constructor(reason: 'timeout' | 'connect_error', message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface Provider {
  readonly protocol: Protocol;
  send(call: UpstreamCall): Promise<UpstreamOutcome>;
  close(): Promise<void>;
}

export function credentialValue(target: CompiledTarget, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const c = target.credential;
  switch (c.kind) {
    case 'none':
      return undefined;
    case 'value':
      return c.value;
    case 'env':
      return env[c.name];
    default: {
      const never: never = c;
      return never;
    }
  }
}
