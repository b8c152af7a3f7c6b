// Anthropic Messages upstream (api.anthropic.com or a vendor speaking its wire format). baseUrl has no /v1, as
// the Anthropic SDK takes it. Auth is x-api-key; anthropic-version is the client's or a stable default, and
// anthropic-beta passes through when the client sent it.
import { HttpTransport } from '../http-send.ts';
import { credentialValue, type Operation, type Provider, type UpstreamCall, type UpstreamOutcome } from '../types.ts';

export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

const PATHS: Partial<Record<Operation, string>> = { messages: '/v1/messages', count_tokens: '/v1/messages/count_tokens' };

export function anthropicHeaders(call: Pick<UpstreamCall, 'target' | 'stream' | 'headers'>): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: call.stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': call.headers['anthropic-version'] || DEFAULT_ANTHROPIC_VERSION,
  };
  const beta = call.headers['anthropic-beta'];
  if (beta) headers['anthropic-beta'] = beta;
  const key = credentialValue(call.target);
  if (key) headers['x-api-key'] = key;
  return headers;
}

export class AnthropicProvider implements Provider {
  readonly protocol = 'anthropic' as const;
  private readonly http = new HttpTransport();

  send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const path = PATHS[call.operation];
    if (!path || !call.target.baseUrl) throw new Error(`anthropic provider cannot serve ${call.operation}`);
    return this.http.send({
      target: call.target,
      url: call.target.baseUrl + path,
      headers: anthropicHeaders(call),
      body: call.body,
      stream: call.stream,
      signal: call.signal,
    });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
