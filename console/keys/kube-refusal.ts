// A failed Kubernetes API call during a key action, as the refusal the user sees (a 4xx page with the reason), so
// an RBAC denial, a missing object or a concurrent change is never a 500. Other failures (the API unreachable) stay
// errors.
import { statusOf } from '../kube/clients.ts';
import { KeyActionError } from './backend.ts';

/** The API server's own message of a failed call. */
export function messageOf(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  try {
    const parsed = typeof body === 'string' ? (JSON.parse(body) as { message?: string }) : (body as { message?: string } | undefined);
    return parsed?.message ?? String(err);
  } catch {
    return String(err);
  }
}

/** `err` as a KeyActionError when the API server refused the call with a 4xx; else `err` itself. */
export function kubeRefusal(err: unknown, key: string): unknown {
  if (err instanceof KeyActionError) return err;
  switch (statusOf(err)) {
    case 403:
      return new KeyActionError(`The Kubernetes API did not let the console change key ${key}: ${messageOf(err)}`, null, 'forbidden');
    case 404:
      return new KeyActionError(`Key ${key} is gone.`, null, 'not-found');
    case 409:
      return new KeyActionError(`Key ${key} changed meanwhile. Reload the page and try again.`, null, 'conflict');
    case 422:
    case 400:
      return new KeyActionError(`The API server refused this change of key ${key}: ${messageOf(err)}`, null, 'invalid');
    default:
      return err;
  }
}
