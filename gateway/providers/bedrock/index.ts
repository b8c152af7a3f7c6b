// AWS Bedrock runtime: Converse for every model family, Invoke for Claude (the Anthropic Messages body, so the
// anthropic translators serve it unchanged) and for the Titan and Cohere embedding models. Calls are signed with SigV4
// (or carry a Bedrock API key as Bearer); streams are AWS event-stream frames, turned into SSE text here
// (event-stream.ts) so the pipeline parses them like any other upstream's.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { HttpTransport } from '../http-send.ts';
import { bodyText, type Protocol, type Provider, type UpstreamCall, type UpstreamOutcome } from '../types.ts';
import { cachedAuth, identity } from './credentials.ts';
import { bedrockError } from './errors.ts';
import { eventStreamToSse } from './event-stream.ts';
import { converseCountTokensBody, countTokensAnswer, countTokensBody, invokeBody } from './invoke-body.ts';
import { signedHeaders } from './sign.ts';
import { actionOf, actionUrl, bedrockProtocol, type BedrockAction } from './urls.ts';

export { bedrockProtocol, isAnthropicModel } from './urls.ts';

const EVENT_STREAM = 'application/vnd.amazon.eventstream';

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The request body Bedrock gets for the action (the translators' body, reshaped for Invoke and CountTokens). */
function bodyFor(action: BedrockAction, protocol: Protocol, call: UpstreamCall): string {
  const body = bodyText(call.body);
  if (action === 'count-tokens' && protocol === 'converse') return converseCountTokensBody(body);
  if (protocol !== 'anthropic' || call.operation === 'embeddings') return body;
  if (action === 'count-tokens') return countTokensBody(body, call.headers);
  return JSON.stringify(invokeBody(body, call.headers));
}

/**
 * Titan answers embeddings with their input token count in the body; Cohere only in Bedrock's
 * x-amzn-bedrock-input-token-count header, which is added to the body as inputTextTokenCount for the translator.
 */
function withTokenCount(body: string, header: string | undefined): string {
  if (!header || !/^\d+$/.test(header) || body.includes('"inputTextTokenCount"')) return body;
  const trimmed = body.trimEnd();
  if (!trimmed.endsWith('}')) return body;
  return `${trimmed.slice(0, -1)}${trimmed.length > 2 ? ',' : ''}"inputTextTokenCount":${header}}`;
}

export class BedrockProvider implements Provider {
  readonly protocol = 'converse' as const;
  private readonly http = new HttpTransport();

  protocolFor(target: CompiledTarget): Protocol {
    return bedrockProtocol(target);
  }

  private async headers(target: CompiledTarget, url: string, body: string, base: Record<string, string>): Promise<Record<string, string>> {
    const auth = await cachedAuth(target);
    if (auth.kind === 'bearer') return { ...base, authorization: `Bearer ${auth.token}` };
    await identity(target, auth.credentials);
    return signedHeaders({ url, region: target.region ?? 'us-east-1', headers: base, body, credentials: auth.credentials });
  }

  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const { target } = call;
    const protocol = bedrockProtocol(target);
    const action = actionOf(protocol, call.operation, call.stream);
    if (!action) throw new Error(`bedrock provider cannot serve ${call.operation} for ${protocol}`);
    const url = actionUrl(target, action);
    const body = bodyFor(action, protocol, call);
    const streamed = action === 'converse-stream' || action === 'invoke-with-response-stream';
    const base: Record<string, string> = { 'content-type': 'application/json', accept: streamed ? EVENT_STREAM : 'application/json' };
    if (action === 'invoke-with-response-stream') base['x-amzn-bedrock-accept'] = 'application/json';
    const headers = await this.headers(target, url, body, base);
    let answered: Record<string, string | string[] | undefined> = {};
    const outcome = await this.http.send({ target, url, headers, body, stream: streamed, signal: call.signal, onHeaders: (h) => (answered = h) });
    switch (outcome.kind) {
      case 'error':
        return { ...bedrockError(outcome.status, firstHeader(answered['x-amzn-errortype']), outcome.body, outcome.retryAfter, protocol), sent: outcome.sent };
      case 'stream':
        return { ...outcome, body: eventStreamToSse(outcome.body, protocol === 'anthropic' ? 'invoke' : 'converse') };
      case 'json':
        if (action === 'count-tokens') return { ...outcome, body: countTokensAnswer(outcome.body) };
        if (call.operation === 'embeddings')
          return { ...outcome, body: withTokenCount(outcome.body, firstHeader(answered['x-amzn-bedrock-input-token-count'])) };
        return outcome;
      default: {
        const never: never = outcome;
        return never;
      }
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
