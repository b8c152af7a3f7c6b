// One JSON POST to a remote service, bounded by the check's signal: a failure says what went wrong (status, timeout,
// not JSON) and never echoes the answer's text or the credential sent.
import { RemoteFailure } from './types.ts';

export async function postJson(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...headers }, body, signal });
  } catch (err) {
    if (signal.aborted) throw new RemoteFailure('timeout', 'no answer in time');
    throw new RemoteFailure('unavailable', `could not be reached (${(err as Error).name})`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    throw new RemoteFailure(signal.aborted ? 'timeout' : 'unavailable', signal.aborted ? 'no answer in time' : 'the answer was cut');
  }
  if (res.status === 401 || res.status === 403) throw new RemoteFailure('credential', `refused the credential (HTTP ${res.status})`);
  if (res.status < 200 || res.status > 299) throw new RemoteFailure('unavailable', `answered HTTP ${res.status}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RemoteFailure('bad_answer', 'answered something other than JSON');
  }
}

/** Waits for `p` until the signal aborts (a credential chain that hangs must not hold the call past its timeout). */
export function bounded<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new RemoteFailure('timeout', 'no answer in time'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new RemoteFailure('timeout', 'no answer in time'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
