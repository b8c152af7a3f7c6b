// Upstream error texts reach clients (a refused request's message, a stream's error event), and some upstreams echo
// the credential they were sent ("quota error for key sk-..."), whole or in part (OpenAI prints a key's first and
// last characters). Such a text is scrubbed of every secret the call carried: the target's credential and what the
// request's auth headers held (a cloud's access token, a session token, a SigV4 key id). Whole secrets, and any run of
// FRAGMENT or more characters found in one, become [redacted]. Only error texts are scrubbed, so a call that
// succeeds pays nothing for it.
import type { CompiledTarget } from '../contract/snapshot.ts';
import { credentialSecrets } from './types.ts';

export const REDACTED = '[redacted]';
/** The shortest piece of a secret that is redacted wherever it appears (a shorter one is too likely by chance). */
export const FRAGMENT = 8;

/** Headers whose whole value is a credential. */
const SECRET_HEADERS = ['x-api-key', 'api-key', 'x-goog-api-key', 'x-amz-security-token'] as const;

/** The secret parts of the auth headers a request was sent with. */
export function authSecrets(headers: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const h of SECRET_HEADERS) {
    const v = headers[h];
    if (v) out.push(v);
  }
  const auth = headers.authorization;
  if (auth) {
    const [scheme = '', rest = ''] = auth.split(/ (.*)/s);
    if (scheme.startsWith('AWS4-')) {
      // SigV4: the key id and the signature are the call's; the rest (date, region, header names) is not secret.
      const id = /Credential=([^/,\s]+)/.exec(rest)?.[1];
      const sig = /Signature=([0-9a-f]+)/.exec(rest)?.[1];
      if (id) out.push(id);
      if (sig) out.push(sig);
    } else out.push(rest || scheme);
  }
  return out;
}

/**
 * The secrets of a target's credential: each value, or for a value that is a JSON document (a service-account key),
 * its fields named like a key, secret or token (its other fields, such as a project id, are not secret and would
 * blank ordinary words of an error text).
 */
export function targetSecrets(target: CompiledTarget): string[] {
  return credentialSecrets(target).flatMap((v) => {
    if (!v.trimStart().startsWith('{')) return [v];
    try {
      const doc = JSON.parse(v) as Record<string, unknown>;
      return Object.entries(doc)
        .filter(([k, x]) => typeof x === 'string' && /key|secret|token/i.test(k))
        .map(([, x]) => x as string);
    } catch {
      return [v];
    }
  });
}

/** Redacts every secret, and every run of FRAGMENT or more characters of one, from texts. */
export class Scrubber {
  private readonly short: string[];
  private readonly grams = new Set<string>();

  constructor(secrets: readonly string[]) {
    this.short = secrets.filter((s) => s.length >= 4 && s.length < FRAGMENT);
    for (const s of secrets) for (let i = 0; i + FRAGMENT <= s.length; i++) this.grams.add(s.slice(i, i + FRAGMENT));
  }

  scrub(text: string): string {
    let t = text;
    for (const s of this.short) t = t.split(s).join(REDACTED);
    if (this.grams.size === 0 || t.length < FRAGMENT) return t;
    let out = '';
    let copied = 0;
    let start = -1;
    let end = -1;
    for (let i = 0; i + FRAGMENT <= t.length; i++) {
      if (!this.grams.has(t.slice(i, i + FRAGMENT))) continue;
      if (start >= 0 && i <= end) {
        end = i + FRAGMENT;
        continue;
      }
      if (start >= 0) out += t.slice(copied, start) + REDACTED;
      if (start >= 0) copied = end;
      start = i;
      end = i + FRAGMENT;
    }
    if (start < 0) return t;
    return out + t.slice(copied, start) + REDACTED + t.slice(end);
  }
}

/** The scrubber of one call's texts: its target's credential and what its request's auth headers carried. */
export function scrubberFor(target: CompiledTarget, sent: readonly string[] = []): Scrubber {
  return new Scrubber([...targetSecrets(target), ...sent]);
}
