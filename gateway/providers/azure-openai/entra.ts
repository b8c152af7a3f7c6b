// Entra ID token sources through @azure/identity, loaded on first use (a gateway without an azure-openai target
// never loads it). Instance discovery is off: the gateway trusts the authority host it is given (the public cloud's
// by default, AZURE_AUTHORITY_HOST otherwise) and asks it nothing but its OpenID configuration and tokens.
import type { TokenCredential } from '@azure/identity';
import type { AccessTokenLike } from '../token-cache.ts';

/** The scope of every Azure OpenAI (Cognitive Services) data-plane call. */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

type Identity = typeof import('@azure/identity');
let identity: Promise<Identity> | null = null;
function loadIdentity(): Promise<Identity> {
  identity ??= import('@azure/identity');
  return identity;
}

/** The keys of a whole Secret read as a service principal (docs/clouds.md). */
export interface ClientSecretKeys {
  AZURE_TENANT_ID: string;
  AZURE_CLIENT_ID: string;
  AZURE_CLIENT_SECRET: string;
  AZURE_AUTHORITY_HOST?: string;
}

/**
 * The process's own identity, tried in this order: the environment's service principal (AZURE_CLIENT_SECRET or
 * AZURE_CLIENT_CERTIFICATE_PATH with AZURE_TENANT_ID and AZURE_CLIENT_ID), AKS Workload Identity
 * (AZURE_FEDERATED_TOKEN_FILE), then the managed identity of the node or pod. Not DefaultAzureCredential: it also
 * tries developer tools (the az CLI, azd, PowerShell, VS Code), slow and out of place in a pod.
 */
export async function ambientCredential(): Promise<TokenCredential> {
  const id = await loadIdentity();
  const opts = { disableInstanceDiscovery: true };
  const managedClientId = process.env.AZURE_CLIENT_ID;
  return new id.ChainedTokenCredential(
    new id.EnvironmentCredential(opts),
    new id.WorkloadIdentityCredential(opts),
    managedClientId ? new id.ManagedIdentityCredential({ clientId: managedClientId }) : new id.ManagedIdentityCredential(),
  );
}

export async function clientSecretCredential(keys: ClientSecretKeys): Promise<TokenCredential> {
  const id = await loadIdentity();
  return new id.ClientSecretCredential(keys.AZURE_TENANT_ID, keys.AZURE_CLIENT_ID, keys.AZURE_CLIENT_SECRET, {
    disableInstanceDiscovery: true,
    ...(keys.AZURE_AUTHORITY_HOST ? { authorityHost: keys.AZURE_AUTHORITY_HOST } : {}),
  });
}

/** One token for the Cognitive Services scope; a library that answers null (it should not) is a failure too. */
export async function cognitiveServicesToken(credential: TokenCredential): Promise<AccessTokenLike> {
  const at = await credential.getToken(COGNITIVE_SERVICES_SCOPE);
  if (!at) throw new Error('the credential returned no token');
  return at;
}
