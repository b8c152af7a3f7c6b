// Azure OpenAI: the OpenAI wire protocol (so the openai translators apply unchanged) at Azure's URLs, with an
// api-key or an Entra ID bearer token (urls.ts, auth.ts).
import { HttpTransport } from '../http-send.ts';
import type { Provider, UpstreamCall, UpstreamOutcome } from '../types.ts';
import { AzureAuth } from './auth.ts';
import { azureUrl } from './urls.ts';

export class AzureOpenAIProvider implements Provider {
  readonly protocol = 'openai' as const;
  private readonly http = new HttpTransport();
  private readonly auth = new AzureAuth();

  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const url = azureUrl(call.target, call.operation);
    const auth = await this.auth.headers(call.target);
    return this.http.send({
      target: call.target,
      url,
      headers: { 'content-type': 'application/json', accept: call.stream ? 'text/event-stream' : 'application/json', ...auth },
      body: call.body,
      stream: call.stream,
      signal: call.signal,
    });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
