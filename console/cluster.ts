// The console as its own process in a cluster (npm run console): Kubernetes sign-in and RBAC, ApiKey objects
// written with the console's ServiceAccount, sessions and "last used" in Redis, usage from Postgres (DATABASE_URL)
// or, without it, from the Redis usage streams. Gateways are untouched: they never talk to the Kubernetes API.
import { existsSync, readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import type { History } from '../gateway/availability/history.ts';
import { RedisHistory } from '../gateway/availability/redis-history.ts';
import { listenHost } from '../gateway/lifecycle/listen-host.ts';
import { connectRedis, redisConnectionFromEnv, type RedisClient } from '../gateway/state/redis-connect.ts';
import { RedisLastUsed } from '../gateway/state/last-used.ts';
import { accountKeys } from '../gateway/state/redis-store.ts';
import type { UsageEvent } from '../gateway/usage/event.ts';
import { createPool } from '../gateway/usage/postgres/pool.ts';
import { KubernetesAuth } from './auth/kubernetes.ts';
import { oidcFromEnv } from './auth/oidc/wiring.ts';
import { ownKeysMaxFromEnv, sessionTtlFromEnv, tokenSignInFromEnv } from './auth/oidc/settings.ts';
import { RedisSessions } from './auth/sessions.ts';
import { RedisSignInLimit } from './auth/sign-in-limit.ts';
import { mountClusterStatus } from './status/cluster.ts';
import { billingWebhookPlugin } from '../billing/payments/webhook-route.ts';
import { startSlaJob, type SlaJob, type SlaJobOptions } from '../billing/sla/sla-job.ts';
import { clusterBilling, slaJobInputs } from '../billing/wiring.ts';
import { ClusterKeys } from './keys/cluster-backend.ts';
import { kubeClients } from './kube/clients.ts';
import { consolePlugin } from './server/plugin.ts';
import { MemoryUsageSource } from './usage/memory-source.ts';
import { PostgresUsageSource } from './usage/postgres-source.ts';
import { fastifyTrustProxy, trustProxyFromEnv } from '../gateway/contract/trust-proxy.ts';
import type { UsageSource } from './usage/report.ts';
import { auditTrailFromEnv } from './audit/wiring.ts';
import { KubeAuditAnnouncer } from './audit/kube-announcer.ts';

type Env = Record<string, string | undefined>;

export const CONSOLE_NEEDS =
  'The console needs REDIS_URL (sessions, last used), SVC_KEY_PEPPER (the secret the gateways hash keys ' +
  'with) and a namespace (WATCH_NAMESPACE, or the in-cluster one).';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

function namespaceOf(env: Env): string {
  const ns = env.WATCH_NAMESPACE || (existsSync(IN_CLUSTER_NAMESPACE) ? readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim() : '');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) throw new Error(CONSOLE_NEEDS);
  return ns;
}

export interface ClusterConsole {
  app: FastifyInstance;
  address: string;
  /** The SLA job (null without DATABASE_URL). */
  sla: SlaJob | null;
  stop(): Promise<void>;
}

function redisUsage(redis: RedisClient, prefix: string): UsageSource {
  return new MemoryUsageSource(async (accounts) => {
    const out: UsageEvent[] = [];
    for (const a of accounts) {
      for (const [, fields] of await redis.xrange(accountKeys(prefix, a).usage, '-', '+')) {
        const i = fields.indexOf('event');
        if (i >= 0 && i % 2 === 0 && fields[i + 1]) out.push(JSON.parse(fields[i + 1] as string) as UsageEvent);
      }
    }
    return out;
  });
}

/** For tests: the SLA job's timer, clock and status history (default: hourly, now, the operator's history in Redis). */
export interface ClusterConsoleOptions {
  sla?: Pick<SlaJobOptions, 'intervalMs' | 'settleMs' | 'now'> & { history?: Pick<History, 'segments'> };
}

export async function startClusterConsole(env: Env, port: number, o: ClusterConsoleOptions = {}): Promise<ClusterConsole> {
  const url = env.REDIS_URL;
  const pepper = env.SVC_KEY_PEPPER;
  if (!url || !pepper) throw new Error(CONSOLE_NEEDS);
  const trustProxy = fastifyTrustProxy(trustProxyFromEnv(env));
  const namespace = namespaceOf(env);
  const prefix = env.SVC_REDIS_PREFIX || 'svc';
  // The gateways' connection settings: a Cluster (SVC_REDIS_CLUSTER), TLS (rediss:// and SVC_REDIS_CA_FILE), ACL users.
  const redis = await connectRedis(redisConnectionFromEnv(url, env), { maxRetriesPerRequest: 1, commandTimeout: 2000 });
  const kube = kubeClients(namespace);
  const auth = new KubernetesAuth(kube);
  const keys = new ClusterKeys(kube, pepper, new RedisLastUsed(redis, prefix));
  const ttl = sessionTtlFromEnv(env);
  const tokenSignIn = tokenSignInFromEnv(env);
  const pool = env.DATABASE_URL ? createPool(env.DATABASE_URL, { max: 2, statementTimeoutMs: 10_000 }) : null;
  const app = Fastify({
    logger: { level: env.LOG_LEVEL ?? 'info', redact: { paths: ['req.headers.cookie', 'req.headers.authorization'], censor: '[redacted]' } },
    trustProxy,
  });
  pool?.on('error', (err) => app.log.warn({ err }, 'Postgres connection lost; reconnecting'));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const ok = await redis.ping().then(
      () => true,
      () => false,
    );
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'redis unreachable' });
  });
  // Who did what (the Activity page): Postgres when set, Events on the Account objects for billing actions.
  const audit = auditTrailFromEnv(env, { pool, log: app.log, announcer: new KubeAuditAnnouncer(kube) });
  audit.start();
  const billing = clusterBilling(env, redis, prefix, () => keys.accounts());
  await app.register(billingWebhookPlugin(billing));
  await app.register(
    consolePlugin({
      billing,
      publicBaseUrl: env.SVC_CONSOLE_BASE_URL || undefined,
      authn: auth,
      authz: auth,
      // OpenID Connect: the person's prefixed user name and groups go into the same SubjectAccessReviews.
      oidc: oidcFromEnv(
        env,
        { redis, prefix },
        (err) => app.log.warn({ err }, 'The OpenID provider could not be reached yet (asked again at the next sign-in)'),
        ttl,
      ),
      tokenSignIn,
      ownKeysMax: ownKeysMaxFromEnv(env),
      keys,
      now: Date.now,
      exampleModel: env.SVC_CONSOLE_EXAMPLE_MODEL || 'mock-mini',
      usage: pool ? new PostgresUsageSource(pool) : redisUsage(redis, prefix),
      sessions: new RedisSessions(redis, prefix, ttl),
      signInLimit: new RedisSignInLimit(redis, prefix),
      apiBaseUrl: env.SVC_API_BASE_URL || undefined,
      audit,
    }),
  );
  // Rotations' grace periods end on time even when nobody opens the page (every replica may do it: idempotent).
  // /status, its JSON and badges, /trust, /.well-known/security.txt: public, from what the operator's leader writes.
  const status = await mountClusterStatus(app, { redis, prefix, env });
  const timer = setInterval(
    () => void keys.sweep(null, Date.now()).catch((err: unknown) => app.log.warn({ err }, 'Pending revocations not applied yet')),
    10_000,
  );
  timer.unref();
  // The SLA job on every replica (one credit sla-YYYY-MM per account and month, whichever runs it): the spend from
  // Postgres (DATABASE_URL; without it there are no statements, so no SLA job), the uptime from the operator's history.
  const slaInputs = slaJobInputs(billing);
  const sla = slaInputs
    ? startSlaJob({
        ...slaInputs,
        history: o.sla?.history ?? new RedisHistory(redis, prefix),
        intervalMs: o.sla?.intervalMs,
        settleMs: o.sla?.settleMs,
        now: o.sla?.now,
        onResult: (account, r, res) =>
          app.log.info(
            {
              account,
              month: r.month,
              uptime: r.uptime,
              creditPercent: r.creditPercent,
              creditNano: r.creditNano,
              verdict: res?.verdict ?? 'nothing to credit',
            },
            'SLA month settled',
          ),
        onError: (err, account) => app.log.warn({ err, account }, 'SLA job: a month not settled yet (retried on the next round)'),
      })
    : null;
  const address = await app.listen({ port, host: listenHost(env) });
  return {
    app,
    address,
    sla: sla?.job ?? null,
    stop: async () => {
      clearInterval(timer);
      audit.stop();
      await sla?.stop();
      status.close();
      await app.close();
      await pool?.end().catch(() => {});
      redis.disconnect();
    },
  };
}
