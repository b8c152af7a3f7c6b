// svc-gateway console in a cluster (npm run console). In standalone mode `npm start` serves the console itself.
import { parseArgs } from 'node:util';
import { endLogs } from '../gateway/logger.ts';
import { startClusterConsole } from './cluster.ts';

const HELP = `svc-gateway console (cluster mode): /dashboard/keys and /dashboard/usage

Usage: npm run console -- [--port N]
  (in a checkout after npm ci; the image runs node console/main.ts)

Sign-in is with the company's OpenID provider (SVC_CONSOLE_OIDC_*) or a Kubernetes bearer token (TokenReview);
rights are Kubernetes RBAC on accounts.gateway.svc.dev/<name> (verbs get, manage-keys, view-usage, manage-billing, view-activity;
SubjectAccessReview, for the OIDC user name and groups with their prefixes). Keys made here are ApiKey objects carrying
only the key's HMAC; the console's own ServiceAccount writes them (charts/svc-gateway/README.md, "The console", has a
user's ServiceAccount, Role and RoleBinding).

Environment:
  KUBECONFIG       the console's identity (default: ~/.kube/config, else the in-cluster ServiceAccount)
  WATCH_NAMESPACE  the namespace of the gateway's objects (default: the in-cluster namespace)
  REDIS_URL        sessions and "last used" (required)      SVC_REDIS_PREFIX   as the gateways (svc)
  SVC_KEY_PEPPER   the secret the gateways hash keys with (required)
  DATABASE_URL     usage from Postgres (the daily rollup); without it, from the Redis usage streams
  PORT (8090), HOST (127.0.0.1; the image and the Helm chart set 0.0.0.0), LOG_LEVEL (info)
  SVC_API_BASE_URL       the API's public URL for the curl example (default: the console's own origin)
  SVC_TRUST_PROXY        behind proxies: a hop count (1 = one Ingress) or their addresses/CIDRs, comma-separated;
                         the client address (sign-in rate limit) is then taken from X-Forwarded-For (default: none)
  SVC_TRUST_MASK_PRIVATE_HOSTS  1: /trust shows private upstream hosts masked (default 0: shown)
  SVC_CONSOLE_OIDC_ISSUER  OpenID Connect sign-in ("Sign in with <provider>"): the provider's issuer URL (https)
  SVC_CONSOLE_OIDC_CLIENT_ID  the console's client id at the provider (required with the issuer)
  SVC_CONSOLE_OIDC_CLIENT_SECRET_FILE  a file holding the client secret (default: none, a public client with PKCE)
  SVC_CONSOLE_OIDC_SCOPES  scopes asked for, space- or comma-separated (openid profile email)
  SVC_CONSOLE_OIDC_USERNAME_CLAIM  the ID token claim naming the person (sub)
  SVC_CONSOLE_OIDC_GROUPS_CLAIM  the ID token claim listing their groups (groups)
  SVC_CONSOLE_OIDC_USERNAME_PREFIX  put before the user name, as the API server's --oidc-username-prefix (default: none)
  SVC_CONSOLE_OIDC_GROUPS_PREFIX  put before each group, as the API server's --oidc-groups-prefix (default: none)
  SVC_CONSOLE_OIDC_NAME  the provider's name on the sign-in button (single sign-on)
  SVC_CONSOLE_TOKEN_SIGN_IN  0: no token field on the sign-in page, its form refused (1: kept for break-glass use)
  SVC_CONSOLE_SESSION_HOURS  the longest a console session lasts, whatever its tokens say (8)
  SVC_CONSOLE_OWN_KEYS_MAX  with the create-own-keys verb: unrevoked keys one person may own per account (5)
  SVC_CONSOLE_AUDIT_RETENTION_DAYS  days the audit trail (the Activity page) keeps a record (400)`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { help: { type: 'boolean', short: 'h' }, port: { type: 'string' } } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  let c;
  try {
    c = await startClusterConsole(process.env, Number(values.port ?? process.env.PORT ?? 8090));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`svc-console listening on ${c.address.replace('0.0.0.0', '127.0.0.1')}\n`);
  const stop = (): void => {
    // The logs last, bounded: a stdout nobody reads (or a closed pipe) must not keep the process from exiting.
    void c
      .stop()
      .then(() => endLogs(c.app.log))
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main();
