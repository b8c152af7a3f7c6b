// Vertex AI: Gemini models through generateContent (protocol gemini: the body comes from the gemini translators) and
// Claude through rawPredict (protocol anthropic: the Messages body of the anthropic translators, with the model in
// the URL and anthropic_version in the body). A target is Claude when its upstreamModel starts with `claude-`
// (Vertex's names for Anthropic's models: claude-sonnet-4@20250514, claude-3-5-haiku@20241022, ...). Auth is an OAuth
// bearer token (Vertex refuses API keys); answers, errors and streams pass through as Vertex sends them (Gemini's
// alt=sse and Claude's Anthropic SSE are both SSE already).
import { HttpTransport } from '../http-send.ts';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { bodyText, type Protocol, type Provider, type UpstreamCall, type UpstreamOutcome } from '../types.ts';
import { sharedGoogleTokens, untilAborted, type GoogleTokens } from './auth.ts';
import { vertexClaudeUrl, vertexGeminiUrl } from './urls.ts';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export function isVertexClaude(target: CompiledTarget): boolean {
  return target.upstreamModel.startsWith('claude-');
}

/**
 * The Messages body as Vertex takes it: `model` left out (it is in the URL; count-tokens keeps it, as its URL names
 * no model) and `anthropic_version` in the body. A new object: the translator's body is not changed.
 */
export function vertexClaudeBody(body: string, operation: UpstreamCall['operation']): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const out: Record<string, unknown> = { anthropic_version: VERTEX_ANTHROPIC_VERSION };
  for (const [k, v] of Object.entries(parsed)) if (k !== 'model' || operation === 'count_tokens') out[k] = v;
  return JSON.stringify(out);
}

export class VertexProvider implements Provider {
  readonly protocol = 'gemini' as const;
  private readonly http = new HttpTransport();
  private readonly tokens: GoogleTokens;

  constructor(tokens: GoogleTokens = sharedGoogleTokens()) {
    this.tokens = tokens;
  }

  protocolFor(target: CompiledTarget): Protocol {
    return isVertexClaude(target) ? 'anthropic' : 'gemini';
  }

  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const { target } = call;
    const token = await untilAborted(this.tokens.bearer(target), call.signal);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      authorization: `Bearer ${token}`,
    };
    let url: string;
    let body = call.body;
    if (isVertexClaude(target)) {
      if (call.operation !== 'messages' && call.operation !== 'count_tokens') throw new Error(`vertex (Claude) cannot serve ${call.operation}`);
      url = vertexClaudeUrl(target, call.operation, call.stream);
      body = vertexClaudeBody(bodyText(call.body), call.operation);
      // Beta features go in the header, as with Anthropic's API; the version is the body's anthropic_version.
      const beta = call.headers['anthropic-beta'];
      if (beta) headers['anthropic-beta'] = beta;
    } else {
      url = vertexGeminiUrl(target, call.operation, call.stream);
    }
    return this.http.send({ target, url, headers, body, stream: call.stream, signal: call.signal });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
