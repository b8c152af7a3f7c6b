// A real OpenID provider in a pod of the local node (node.test.ts, step 7b): `oidc-provider` (an OpenID Certified
// implementation) with its own login and consent pages (its development interactions: any password, the login names
// the account), served over https with a certificate of a throwaway CA the test made. The pod runs the project's own
// image (it has Node 24) with this file and the repository's node_modules mounted from the host (hostPath: the local
// node is this machine), since the image holds production dependencies only.
//   OIDC_ISSUER        https URL the console and the browser both reach (the Service's address)
//   OIDC_CLIENT_ID     the console's client id; its secret in /oidc/client/client-secret, its redirect OIDC_REDIRECT_URI
//   OIDC_USERS         JSON: { login: { email, groups } }
//   /oidc/tls/tls.crt, /oidc/tls/tls.key: the certificate for the issuer's address
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import Provider from 'oidc-provider';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

// Where the pod mounts the client secret and the certificate (another directory for a run outside a pod).
const DIR = process.env.OIDC_DIR ?? '/oidc';
const users = JSON.parse(need('OIDC_USERS')) as Record<string, { email: string; groups: string[] }>;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const provider = new Provider(need('OIDC_ISSUER'), {
  clients: [
    {
      client_id: need('OIDC_CLIENT_ID'),
      client_secret: readFileSync(`${DIR}/client/client-secret`, 'utf8').trim(),
      redirect_uris: [need('OIDC_REDIRECT_URI')],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'e2e-rs256', alg: 'RS256', use: 'sig' }] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
  // Groups and email in the ID token itself, as the console reads them there.
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  findAccount: (_ctx, id) => {
    const u = users[id];
    if (!u) return undefined;
    return { accountId: id, claims: () => ({ sub: id, email: u.email, email_verified: true, groups: u.groups }) };
  },
});

const server = createServer({ cert: readFileSync(`${DIR}/tls/tls.crt`), key: readFileSync(`${DIR}/tls/tls.key`) }, provider.callback());
server.listen(8443, '0.0.0.0', () => console.log(`oidc-provider listening on 8443 as ${need('OIDC_ISSUER')}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
