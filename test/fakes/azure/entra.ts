// A fake Microsoft Entra ID on https://127.0.0.1 (point AZURE_AUTHORITY_HOST at it): the endpoints @azure/identity's
// MSAL calls for a confidential client (the tenant's OpenID configuration, the v2.0 token endpoint; the instance
// discovery document too, though the gateway turns discovery off), issuing short-lived opaque access tokens for
// client credentials (a client secret, or workload identity's client_assertion read from AZURE_FEDERATED_TOKEN_FILE).
// The fake Azure OpenAI checks bearer tokens against the ones issued here, expiry included.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { loopbackCert } from './tls.ts';

export interface EntraClient {
  tenant: string;
  clientId: string;
  /** The client secret it authenticates with, or the federated token (workload identity) it presents. */
  secret?: string;
  assertion?: string;
}

export interface TokenRequest {
  tenant: string;
  clientId: string;
  grant: string;
  scope: string;
  /** How the client proved itself: 'secret' or 'assertion'; 'bad' when the proof was refused. */
  proof: 'secret' | 'assertion' | 'bad';
}

export interface FakeEntra {
  /** The authority host (AZURE_AUTHORITY_HOST). */
  url: string;
  /** The self-signed certificate's file (NODE_EXTRA_CA_CERTS of a child process). */
  certFile: string;
  cert: string;
  /** Every token request, in order. */
  tokenRequests: TokenRequest[];
  /** Other requests (path), to see what MSAL asks for. */
  requests: string[];
  /** Lifetime of the tokens it issues (seconds). */
  tokenLifetimeSec: number;
  /** Every token issued (the fake Azure checks with `valid`). */
  readonly issued: ReadonlyMap<string, number>;
  register(c: EntraClient): void;
  /** Client ids whose token requests are never answered (a stalled endpoint). */
  stalled: Set<string>;
  /** An issued token for the Cognitive Services scope, not expired. */
  valid(token: string): boolean;
  close(): Promise<void>;
}

const SCOPE = 'https://cognitiveservices.azure.com/.default';

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => resolve(raw));
  });
}

/** Entra's error shape (AADSTS codes in error_description and error_codes). */
function aadError(res: ServerResponse, status: number, error: string, code: number, text: string): void {
  json(res, status, {
    error,
    error_description: `AADSTS${code}: ${text} Trace ID: 00000000-0000-0000-0000-000000000000 Correlation ID: 00000000-0000-0000-0000-000000000000 Timestamp: 2026-11-25 00:00:00Z`,
    error_codes: [code],
    timestamp: '2026-11-25 00:00:00Z',
    trace_id: '00000000-0000-0000-0000-000000000000',
    correlation_id: '00000000-0000-0000-0000-000000000000',
  });
}

export async function startFakeEntra(tokenLifetimeSec = 3600): Promise<FakeEntra> {
  const { cert, key, certFile } = loopbackCert();
  const clients: EntraClient[] = [];
  const issued = new Map<string, number>();
  let url = '';
  const fake: FakeEntra = {
    url: '',
    certFile,
    cert,
    tokenRequests: [],
    requests: [],
    tokenLifetimeSec,
    issued,
    stalled: new Set(),
    register: (c) => clients.push(c),
    valid: (t) => (issued.get(t) ?? 0) > Date.now(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server = createServer({ cert, key }, (req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', url).pathname;
      fake.requests.push(`${req.method ?? 'GET'} ${path}`);
      let m = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
      if (m && req.method === 'GET') {
        const t = m[1] as string;
        return json(res, 200, {
          token_endpoint: `${url}/${t}/oauth2/v2.0/token`,
          token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
          jwks_uri: `${url}/${t}/discovery/v2.0/keys`,
          response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
          subject_types_supported: ['pairwise'],
          id_token_signing_alg_values_supported: ['RS256'],
          issuer: `${url}/${t}/v2.0`,
          authorization_endpoint: `${url}/${t}/oauth2/v2.0/authorize`,
          device_authorization_endpoint: `${url}/${t}/oauth2/v2.0/devicecode`,
          end_session_endpoint: `${url}/${t}/oauth2/v2.0/logout`,
          tenant_region_scope: 'EU',
          cloud_instance_name: 'microsoftonline.com',
        });
      }
      if (path === '/common/discovery/instance') {
        const host = new URL(url).host;
        return json(res, 200, {
          tenant_discovery_endpoint: `${url}/common/v2.0/.well-known/openid-configuration`,
          'api-version': '1.1',
          metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
        });
      }
      m = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
      if (m && req.method === 'POST') {
        const tenant = m[1] as string;
        const form = new URLSearchParams(await readBody(req));
        const clientId = form.get('client_id') ?? '';
        const grant = form.get('grant_type') ?? '';
        const scope = form.get('scope') ?? '';
        const client = clients.find((c) => c.tenant === tenant && c.clientId === clientId);
        const secret = form.get('client_secret');
        const assertion = form.get('client_assertion');
        const proof: TokenRequest['proof'] =
          client && secret !== null && client.secret === secret
            ? 'secret'
            : client &&
                assertion !== null &&
                client.assertion === assertion &&
                form.get('client_assertion_type') === 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
              ? 'assertion'
              : 'bad';
        fake.tokenRequests.push({ tenant, clientId, grant, scope, proof });
        if (fake.stalled.has(clientId)) return;
        if (grant !== 'client_credentials') return aadError(res, 400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
        if (!client) return aadError(res, 400, 'unauthorized_client', 700016, `Application with identifier '${clientId}' was not found in the directory.`);
        if (proof === 'bad' && secret !== null) return aadError(res, 401, 'invalid_client', 7000215, 'Invalid client secret provided.');
        if (proof === 'bad') return aadError(res, 400, 'invalid_client', 700024, 'Client assertion is not within its valid time range.');
        if (!scope.split(' ').includes(SCOPE)) return aadError(res, 400, 'invalid_scope', 1002012, 'The provided value for scope is not valid.');
        const token = `fake-entra-${randomBytes(24).toString('base64url')}`;
        issued.set(token, Date.now() + fake.tokenLifetimeSec * 1000);
        return json(res, 200, { token_type: 'Bearer', expires_in: fake.tokenLifetimeSec, ext_expires_in: fake.tokenLifetimeSec, access_token: token });
      }
      return aadError(res, 404, 'invalid_request', 90002, `Unknown endpoint ${path}.`);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.url = url;
  return fake;
}
