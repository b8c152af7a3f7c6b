// OpenAI-compatible upstream (api.openai.com or any vendor speaking its wire format). baseUrl ends in /v1.
import { HttpTransport } from '../http-send.ts';
import {
  credentialValue,
  type AudioOutcome,
  type AudioUpstreamCall,
  type Operation,
  type Provider,
  type UpstreamCall,
  type UpstreamOutcome,
} from '../types.ts';

// Rerank: Jina, Voyage and vLLM serve {base}/v1/rerank, Cohere {base}/v2/rerank (its baseUrl ends in /v2).
const PATHS: Partial<Record<Operation, string>> = {
  chat: '/chat/completions',
  embeddings: '/embeddings',
  responses: '/responses',
  completions: '/completions',
  rerank: '/rerank',
  moderations: '/moderations',
  images: '/images/generations',
  image_edits: '/images/edits',
};

export class OpenAIProvider implements Provider {
  readonly protocol = 'openai' as const;
  private readonly http = new HttpTransport();

  send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const path = PATHS[call.operation];
    if (!path || !call.target.baseUrl) throw new Error(`openai provider cannot serve ${call.operation}`);
    const headers: Record<string, string> = {
      'content-type': call.form?.contentType ?? 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
      ...(call.form ? { 'content-length': String(call.form.length) } : {}),
    };
    const key = credentialValue(call.target);
    if (key) headers.authorization = `Bearer ${key}`;
    return this.http.send({
      target: call.target,
      url: call.target.baseUrl + path,
      headers,
      body: call.form ? call.form.body() : call.body,
      stream: call.stream,
      signal: call.signal,
    });
  }

  /** {baseUrl}/audio/transcriptions, /audio/translations, /audio/speech: OpenAI, and self-hosted Whisper or vLLM. */
  audio(call: AudioUpstreamCall): Promise<AudioOutcome> {
    if (!call.target.baseUrl) throw new Error('openai provider needs a baseUrl');
    const headers: Record<string, string> = { 'content-type': call.contentType, 'content-length': String(call.length) };
    const key = credentialValue(call.target);
    if (key) headers.authorization = `Bearer ${key}`;
    return this.http.sendBytes({ target: call.target, url: `${call.target.baseUrl}/audio/${call.operation}`, headers, body: call.body(), signal: call.signal });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
