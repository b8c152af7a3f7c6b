// The AWS credential of a Bedrock target, built once per target credential and reused by every call:
// - ambient: the default Node chain of @aws-sdk/credential-providers (environment, EKS IRSA web identity, EKS Pod
//   Identity container credentials, ...), memoized by the chain itself and refreshed 5 minutes before expiry;
// - a whole Secret (bundle): AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key, sent as Bearer), or AWS_ACCESS_KEY_ID +
//   AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), optionally assuming AWS_ROLE_ARN (+ AWS_ROLE_EXTERNAL_ID) with them;
// - a Secret key or an env variable: a Bedrock API key (Bearer).
// A credential that cannot be obtained is an UpstreamFailure('credential_error') whose text names what is missing,
// never a value.
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { CredentialBackoff } from '../credential-backoff.ts';
import { credentialValue, UpstreamFailure } from '../types.ts';

export type BedrockAuth = { kind: 'bearer'; token: string } | { kind: 'sigv4'; credentials: AwsCredentialIdentityProvider };

/** Refresh this long before expiry (as the SDK's own chain does). */
const REFRESH_BEFORE_MS = 5 * 60_000;

/** One fetch at a time; a cached identity until it is within REFRESH_BEFORE_MS of its expiry. */
export function memoizeCredentials(fetch: AwsCredentialIdentityProvider, now: () => number = Date.now): AwsCredentialIdentityProvider {
  let cached: AwsCredentialIdentity | undefined;
  let inflight: Promise<AwsCredentialIdentity> | undefined;
  return () => {
    if (cached && (cached.expiration === undefined || cached.expiration.getTime() - now() > REFRESH_BEFORE_MS)) return Promise.resolve(cached);
    inflight ??= fetch()
      .then((c) => (cached = c))
      .finally(() => (inflight = undefined));
    return inflight;
  };
}

function fail(target: CompiledTarget, why: string): UpstreamFailure {
  return new UpstreamFailure('credential_error', `the AWS credentials of target ${target.name} cannot be obtained: ${why}`);
}

let ambient: AwsCredentialIdentityProvider | undefined;

async function ambientChain(): Promise<AwsCredentialIdentityProvider> {
  if (!ambient) {
    const { fromNodeProviderChain } = await import('@aws-sdk/credential-providers');
    ambient = fromNodeProviderChain();
  }
  return ambient;
}

function bundleOf(target: CompiledTarget): Record<string, string> {
  try {
    const data = JSON.parse(target.credential.kind === 'bundle' ? target.credential.value : '{}') as Record<string, unknown>;
    return Object.fromEntries(Object.entries(data).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
  } catch {
    throw fail(target, 'the Secret is not readable');
  }
}

async function fromBundle(target: CompiledTarget): Promise<BedrockAuth> {
  const b = bundleOf(target);
  if (b.AWS_BEARER_TOKEN_BEDROCK) return { kind: 'bearer', token: b.AWS_BEARER_TOKEN_BEDROCK };
  if (!b.AWS_ACCESS_KEY_ID || !b.AWS_SECRET_ACCESS_KEY) {
    throw fail(target, 'its Secret has neither AWS_BEARER_TOKEN_BEDROCK nor both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  }
  const keys: AwsCredentialIdentity = {
    accessKeyId: b.AWS_ACCESS_KEY_ID,
    secretAccessKey: b.AWS_SECRET_ACCESS_KEY,
    ...(b.AWS_SESSION_TOKEN ? { sessionToken: b.AWS_SESSION_TOKEN } : {}),
  };
  if (!b.AWS_ROLE_ARN) return { kind: 'sigv4', credentials: () => Promise.resolve(keys) };
  const { fromTemporaryCredentials } = await import('@aws-sdk/credential-providers');
  const assume = fromTemporaryCredentials({
    params: {
      RoleArn: b.AWS_ROLE_ARN,
      RoleSessionName: 'svc-gateway',
      ...(b.AWS_ROLE_EXTERNAL_ID ? { ExternalId: b.AWS_ROLE_EXTERNAL_ID } : {}),
    },
    masterCredentials: keys,
    clientConfig: { region: target.region ?? 'us-east-1' },
  });
  return { kind: 'sigv4', credentials: memoizeCredentials(() => assume()) };
}

/** The auth of a target (not yet the identity: that is fetched, and refreshed, per call through the memoized provider). */
export async function authOf(target: CompiledTarget): Promise<BedrockAuth> {
  const c = target.credential;
  switch (c.kind) {
    case 'ambient':
      return { kind: 'sigv4', credentials: await ambientChain() };
    case 'bundle':
      return fromBundle(target);
    case 'value':
    case 'env': {
      const token = credentialValue(target);
      if (!token) throw fail(target, c.kind === 'env' ? `the environment variable ${c.name} is not set` : 'the Secret key is empty');
      return { kind: 'bearer', token };
    }
    case 'none':
      throw fail(target, 'the target has no credentials (use ambient, secretKeyRef or env)');
    default: {
      const never: never = c;
      return never;
    }
  }
}

const failures = new WeakMap<AwsCredentialIdentityProvider, CredentialBackoff<UpstreamFailure>>();

/**
 * The identity now (cached by the provider); a failure of the chain or of STS is a credential_error, held by the
 * clouds' common back-off (credential-backoff.ts) so that calls in the meantime fall over at once instead of each
 * waiting for the chain to fail again.
 */
export async function identity(target: CompiledTarget, provider: AwsCredentialIdentityProvider, now: () => number = Date.now): Promise<AwsCredentialIdentity> {
  let backoff = failures.get(provider);
  const held = backoff?.held(now());
  if (held) throw held;
  try {
    const id = await provider();
    backoff?.succeeded();
    return id;
  } catch (err) {
    const e = err as { name?: string; message?: string };
    // The chains' messages say which source failed and why; they carry no key (STS answers never echo one).
    const failure = fail(target, `${e.name ?? 'Error'}: ${(e.message ?? '').split('\n')[0]?.slice(0, 300)}`);
    if (!backoff) failures.set(provider, (backoff = new CredentialBackoff()));
    backoff.failed(failure, now());
    throw failure;
  }
}

/**
 * One auth per target credential for the whole process (the call path and the availability probes share it), so its
 * identity is fetched once and refreshed by one provider. An auth that could not be built is tried again next time
 * (a Secret may be fixed meanwhile).
 */
const auths = new Map<string, Promise<BedrockAuth>>();

export function cachedAuth(target: CompiledTarget): Promise<BedrockAuth> {
  const c = target.credential;
  const key = c.kind === 'ambient' || c.kind === 'none' ? c.kind : c.kind === 'env' ? `env:${c.name}` : `${c.kind}:${target.region ?? ''}:${c.value}`;
  let a = auths.get(key);
  if (!a) {
    a = authOf(target);
    a.catch(() => auths.delete(key));
    auths.set(key, a);
  }
  return a;
}
