// What a careless upstream does with the credential it was sent: it quotes it in an error text ("quota error for key
// sk-..."). The fakes' `echo` option sends it mid-stream, so tests can prove the gateway never passes it on.
import type { RecordedCall } from './recording-server.ts';

/** The credential a request carried: an API key header, or the token of its Authorization header. */
export function credentialSeen(call: RecordedCall): string {
  const h = call.headers;
  for (const name of ['x-api-key', 'api-key', 'x-goog-api-key']) {
    const v = h[name];
    if (typeof v === 'string' && v !== '') return v;
  }
  const auth = h.authorization ?? '';
  return auth.replace(/^Bearer /, '');
}

/** An error text that quotes the request's credential. */
export function echoedCredential(call: RecordedCall): string {
  return `quota error for key ${credentialSeen(call)}`;
}
