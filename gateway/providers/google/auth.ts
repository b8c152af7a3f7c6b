// Google OAuth access tokens for Vertex AI (and the Gemini API with ambient credentials), from google-auth-library,
// loaded on the first call of a Google target. One token source per credential, reused across calls: the library
// caches each token and fetches the next one only when the cached one is within EARLY_REFRESH_MS of expiring.
import { createHash } from 'node:crypto';
import type { GoogleAuth } from 'google-auth-library';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { CredentialBackoffs } from '../credential-backoff.ts';
import { credentialValue, UpstreamFailure } from '../types.ts';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** The Gemini API's own scope, asked for beside cloud-platform when a gemini target uses ambient credentials. */
export const GENERATIVE_LANGUAGE_SCOPE = 'https://www.googleapis.com/auth/generative-language';
/** The process's token sources, shared by every registry (the gateway's, the probes'): one per credential. */
let shared: GoogleTokens | undefined;
export function sharedGoogleTokens(): GoogleTokens {
  shared ??= new GoogleTokens();
  return shared;
}

/** The key of a whole Secret (secretKeyRef without key) that holds the service-account JSON. */
export const SERVICE_ACCOUNT_KEY = 'service-account.json';
/**
 * A token is refreshed this long before it expires (the library's default is 5 minutes). The GKE metadata server
 * hands out the token it holds until about 5 minutes before its expiry, so a shorter margin keeps a token in use for
 * its whole life instead of asking the metadata server on every call of its last 5 minutes.
 */
export const EARLY_REFRESH_MS = 60_000;
const MAX_SOURCES = 64;
type Auth = Pick<GoogleAuth, 'getAccessToken'>;
type Library = typeof import('google-auth-library');

let library: Promise<Library> | undefined;
function load(): Promise<Library> {
  library ??= import('google-auth-library');
  return library;
}

/** Where a target's token comes from: the process's Application Default Credentials, or a credential JSON. */
type Source = { kind: 'adc'; scopes: string[] } | { kind: 'json'; json: string; scopes: string[] };

/** Access tokens per credential; `bearer` throws UpstreamFailure('credential_error') when none can be had. */
export class GoogleTokens {
  private readonly sources = new Map<string, Promise<Auth>>();
  /** The last failure per source, held by the clouds' common back-off (credential-backoff.ts). */
  private readonly failures = new CredentialBackoffs<string, UpstreamFailure>(MAX_SOURCES);

  async bearer(target: CompiledTarget, scopes: string[] = [CLOUD_PLATFORM_SCOPE]): Promise<string> {
    const source = sourceOf(target, scopes);
    const id = sourceId(source);
    const backoff = this.failures.of(id);
    const held = backoff.held(Date.now());
    if (held) throw held;
    const what = source.kind === 'adc' ? 'Application Default Credentials' : 'the service-account JSON';
    let token: string | null | undefined;
    let reason = 'the library returned none';
    try {
      token = await (await this.auth(id, source, target)).getAccessToken();
    } catch (err) {
      reason = safeReason(err);
    }
    if (!token) {
      const error = new UpstreamFailure('credential_error', `could not obtain a Google access token from ${what}: ${reason}`);
      backoff.failed(error, Date.now());
      throw error;
    }
    backoff.succeeded();
    return token;
  }

  private auth(id: string, source: Source, target: CompiledTarget): Promise<Auth> {
    let auth = this.sources.get(id);
    if (!auth) {
      if (this.sources.size >= MAX_SOURCES) this.sources.delete(this.sources.keys().next().value as string);
      auth = build(source, target);
      // A source that could not even be built (bad JSON) is tried again on the next call, not cached as failed.
      auth.catch(() => this.sources.delete(id));
      this.sources.set(id, auth);
    }
    return auth;
  }
}

async function build(source: Source, target: CompiledTarget): Promise<Auth> {
  const { GoogleAuth } = await load();
  const clientOptions = { eagerRefreshThresholdMillis: EARLY_REFRESH_MS };
  // A known project id spares the library its project lookups (environment, gcloud, the metadata server).
  const projectId = target.project;
  if (source.kind === 'adc') return new GoogleAuth({ scopes: source.scopes, clientOptions, ...(projectId ? { projectId } : {}) });
  let credentials: Record<string, unknown>;
  try {
    credentials = JSON.parse(source.json) as Record<string, unknown>;
  } catch {
    // Not the parser's message: it quotes the text around the error, which would be a piece of the key.
    throw new Error('the credential is not valid JSON');
  }
  if (typeof credentials !== 'object' || credentials === null || typeof credentials.type !== 'string')
    throw new Error('the credential JSON has no "type" (expected a service-account key, "type": "service_account")');
  const project = projectId ?? (typeof credentials.project_id === 'string' ? credentials.project_id : undefined);
  return new GoogleAuth({ credentials, scopes: source.scopes, clientOptions, ...(project ? { projectId: project } : {}) });
}

/**
 * A token for a call that may be aborted meanwhile (its client left, its total timeout struck): the call stops waiting
 * at once; the token, when it comes, stays cached for the next call.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A source's identity: a hash, so the map holds no credential as a key. */
function sourceId(source: Source): string {
  return createHash('sha256')
    .update(`${source.kind}\0${source.scopes.join(' ')}\0${source.kind === 'json' ? source.json : ''}`)
    .digest('base64url');
}

function sourceOf(target: CompiledTarget, scopes: string[]): Source {
  const c = target.credential;
  switch (c.kind) {
    case 'ambient':
      return { kind: 'adc', scopes };
    case 'bundle': {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(c.value) as Record<string, unknown>;
      } catch {
        data = {};
      }
      const json = data[SERVICE_ACCOUNT_KEY];
      if (typeof json !== 'string') throw new UpstreamFailure('credential_error', `the credentials Secret has no key ${SERVICE_ACCOUNT_KEY}`);
      return { kind: 'json', json, scopes };
    }
    case 'value':
    case 'env': {
      const json = credentialValue(target);
      if (json === undefined || json === '')
        throw new UpstreamFailure('credential_error', c.kind === 'env' ? `environment variable ${c.name} is not set` : 'the credential is empty');
      return { kind: 'json', json, scopes };
    }
    case 'none':
      throw new UpstreamFailure('credential_error', `target ${target.name} has no credentials (use ambient, or a Secret with a service-account JSON)`);
    default: {
      const never: never = c;
      return never;
    }
  }
}

/** The library's reason, without anything that could be a piece of a key, and short. */
function safeReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/PRIVATE KEY|private_key/i.test(message)) return 'the credential was refused';
  return message.replace(/\s+/g, ' ').slice(0, 300);
}
