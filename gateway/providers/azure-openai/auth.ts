// The auth header of an azure-openai target: `api-key` (a key from a Secret or the environment, or the `api-key`
// key of a whole Secret) or `Authorization: Bearer` with an Entra ID token (the process's workload or managed
// identity, or a service principal's client secret from a whole Secret). One token cache per credential, shared by
// every target, call and probe of the process that uses it.
import { createHash } from 'node:crypto';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { UpstreamFailure } from '../types.ts';
import { ambientCredential, clientSecretCredential, cognitiveServicesToken, type ClientSecretKeys } from './entra.ts';
import { TokenCache } from '../token-cache.ts';

const SP_KEYS = ['AZURE_TENANT_ID', 'AZURE_CLIENT_ID', 'AZURE_CLIENT_SECRET'] as const;

/** Why a token could not be had, without anything secret: the error's class and Entra's AADSTS code if it gave one. */
function whyNoToken(err: unknown): string {
  const name = err instanceof Error ? err.name : 'Error';
  const aadsts = err instanceof Error ? /AADSTS\d+/.exec(err.message)?.[0] : undefined;
  return aadsts ? `${name} ${aadsts}` : name;
}

/**
 * Token caches by credential, for the whole process: the call pipeline and the availability probes have provider
 * registries of their own, and still share one token per credential.
 */
const caches = new Map<string, TokenCache>();

export class AzureAuth {
  async headers(target: CompiledTarget, env: NodeJS.ProcessEnv = process.env): Promise<Record<string, string>> {
    const c = target.credential;
    switch (c.kind) {
      case 'none':
        return {};
      case 'value':
        return { 'api-key': c.value };
      case 'env': {
        const key = env[c.name];
        if (!key) throw new UpstreamFailure('credential_error', `target ${target.name}: environment variable ${c.name} is not set`);
        return { 'api-key': key };
      }
      case 'bundle':
        return this.fromBundle(target, c.value);
      case 'ambient':
        return this.bearer(target, 'ambient', () => ambientCredential());
      default: {
        const never: never = c;
        return never;
      }
    }
  }

  private fromBundle(target: CompiledTarget, bundle: string): Promise<Record<string, string>> {
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(bundle) as Record<string, unknown>;
    } catch {
      throw new UpstreamFailure('credential_error', `target ${target.name}: the credentials Secret cannot be read`);
    }
    const key = data['api-key'];
    if (typeof key === 'string' && key !== '') return Promise.resolve({ 'api-key': key });
    const missing = SP_KEYS.filter((k) => typeof data[k] !== 'string' || data[k] === '');
    if (missing.length > 0) {
      throw new UpstreamFailure('credential_error', `target ${target.name}: the credentials Secret has neither api-key nor ${missing.join(', ')}`);
    }
    const id = createHash('sha256').update(bundle).digest('hex');
    return this.bearer(target, `sp:${id}`, () => clientSecretCredential(data as unknown as ClientSecretKeys));
  }

  private async bearer(target: CompiledTarget, id: string, make: () => Promise<import('@azure/identity').TokenCredential>): Promise<Record<string, string>> {
    let cache = caches.get(id);
    if (!cache) {
      let credential: Promise<import('@azure/identity').TokenCredential> | null = null;
      cache = new TokenCache(async () => cognitiveServicesToken(await (credential ??= make())));
      caches.set(id, cache);
    }
    try {
      return { authorization: `Bearer ${await cache.get()}` };
    } catch (err) {
      throw new UpstreamFailure('credential_error', `target ${target.name}: no Entra ID token (${whyNoToken(err)})`);
    }
  }
}
