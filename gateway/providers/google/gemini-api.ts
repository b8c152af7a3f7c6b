// The Gemini API (AI Studio, generativelanguage.googleapis.com): generateContent and streamGenerateContent?alt=sse,
// the body from the gemini translators. Auth: an API key in x-goog-api-key (secretKeyRef {name, key} or env), or
// with `ambient` an OAuth bearer token of the process's Application Default Credentials.
import { HttpTransport } from '../http-send.ts';
import { credentialValue, UpstreamFailure, type Provider, type UpstreamCall, type UpstreamOutcome } from '../types.ts';
import { CLOUD_PLATFORM_SCOPE, GENERATIVE_LANGUAGE_SCOPE, sharedGoogleTokens, untilAborted, type GoogleTokens } from './auth.ts';
import { geminiApiUrl } from './urls.ts';

export class GeminiApiProvider implements Provider {
  readonly protocol = 'gemini' as const;
  private readonly http = new HttpTransport();
  private readonly tokens: GoogleTokens;

  constructor(tokens: GoogleTokens = sharedGoogleTokens()) {
    this.tokens = tokens;
  }

  async send(call: UpstreamCall): Promise<UpstreamOutcome> {
    const { target } = call;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: call.stream ? 'text/event-stream' : 'application/json',
    };
    const c = target.credential;
    if (c.kind === 'ambient') {
      const token = await untilAborted(this.tokens.bearer(target, [CLOUD_PLATFORM_SCOPE, GENERATIVE_LANGUAGE_SCOPE]), call.signal);
      headers.authorization = `Bearer ${token}`;
    } else {
      const key = credentialValue(target);
      if (!key) {
        const why = c.kind === 'env' ? `environment variable ${c.name} is not set` : 'the target has no API key';
        throw new UpstreamFailure('credential_error', `no Gemini API key: ${why}`);
      }
      headers['x-goog-api-key'] = key;
    }
    const url = geminiApiUrl(target, call.operation, call.stream);
    return this.http.send({ target, url, headers, body: call.body, stream: call.stream, signal: call.signal });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
