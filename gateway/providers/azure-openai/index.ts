// Azure OpenAI: the OpenAI wire protocol (so the openai translators apply unchanged) at Azure's URLs, with an
// api-key or an Entra ID bearer token (urls.ts, auth.ts).
import { HttpTransport } from '../http-send.ts';
import type { AudioOutcome, AudioUpstreamCall, Provider, UpstreamCall, UpstreamOutcome } from '../types.ts';
import { AzureAuth } from './auth.ts';
import { azureAudioUrl, azureUrl } from './urls.ts';

export class AzureOpenAIProvider implements Provider {
  readonly protocol = 'openai' as const;
  private readonly http = new HttpTransport();
  private readonly auth = new AzureAuth();

  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const url = azureUrl(call.target, call.operation);
    // The call's timeouts and its client's departure also end a wait for a token (a slow Entra ID or IMDS).
    const auth = await untilAborted(this.auth.headers(call.target), call.signal);
    return this.http.send({
      target: call.target,
      url,
      headers: {
        'content-type': call.form?.contentType ?? 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        ...(call.form ? { 'content-length': String(call.form.length) } : {}),
        ...auth,
      },
      body: call.form ? call.form.body() : call.body,
      stream: call.stream,
      signal: call.signal,
    });
  }

  /** Whisper and TTS deployments: the same multipart or JSON body as OpenAI's, at Azure's URL, with Azure's auth. */
  async audio(call: AudioUpstreamCall): Promise<AudioOutcome> {
    const url = azureAudioUrl(call.target, call.operation);
    const auth = await untilAborted(this.auth.headers(call.target), call.signal);
    const headers = { 'content-type': call.contentType, 'content-length': String(call.length), ...auth };
    return this.http.sendBytes({ target: call.target, url, headers, body: call.body(), signal: call.signal });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** The promise's outcome, or the signal's reason once it aborts first (the fetch goes on for the next calls). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
