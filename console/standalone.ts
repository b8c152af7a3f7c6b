// The console inside the standalone process (npm start): same port, /dashboard/*, the admin token, keys in the
// process's own store (memory or Redis), usage from Postgres when DATABASE_URL is set, else from the events kept
// in memory (or the Redis usage streams).
import type { FastifyInstance } from 'fastify';
import type { KeyRecord, Snapshot } from '../gateway/contract/snapshot.ts';
import type { LastUsed } from '../gateway/state/last-used.ts';
import type { MemoryStore } from '../gateway/state/memory-store.ts';
import type { RedisStore } from '../gateway/state/redis-store.ts';
import { MemoryUsageSink, type UsageSink } from '../gateway/usage/event.ts';
import { createPool } from '../gateway/usage/postgres/pool.ts';
import { accessFromEnv, MappedAccess } from './auth/access-file.ts';
import { AdminTokenAuth, generateAdminToken } from './auth/admin-token.ts';
import { oidcFromEnv } from './auth/oidc/wiring.ts';
import { ownKeysMaxFromEnv, sessionTtlFromEnv, tokenSignInFromEnv } from './auth/oidc/settings.ts';
import { MemorySessions, RedisSessions } from './auth/sessions.ts';
import { MemorySignInLimit, RedisSignInLimit } from './auth/sign-in-limit.ts';
import type { BillingBackend } from '../billing/backend.ts';
import { billingWebhookPlugin } from '../billing/payments/webhook-route.ts';
import { standaloneBilling } from '../billing/wiring.ts';
import { MemoryPublisher, RedisPublisher } from './keys/publisher.ts';
import { MemoryRegistry, RedisRegistry } from './keys/registry.ts';
import { StandaloneKeys } from './keys/standalone-backend.ts';
import { consolePlugin } from './server/plugin.ts';
import { MemoryUsageSource } from './usage/memory-source.ts';
import { PostgresUsageSource } from './usage/postgres-source.ts';
import type { UsageSource } from './usage/report.ts';
import { auditTrailFromEnv } from './audit/wiring.ts';

export interface StandaloneConsoleOptions {
  snapshot: Snapshot;
  configKeys: KeyRecord[];
  pepper: string;
  backing: { kind: 'memory'; store: MemoryStore; sink: UsageSink } | { kind: 'redis'; store: RedisStore };
  lastUsed: LastUsed;
  env: Record<string, string | undefined>;
}

export interface StandaloneConsole {
  /** The admin token when it was generated here (print it once); null when it came from SVC_CONSOLE_TOKEN. */
  generatedToken: string | null;
  /** The billing backend (npm start runs the SLA job on it once the status history exists). */
  billing: BillingBackend;
  close(): Promise<void>;
}

function usageSource(o: StandaloneConsoleOptions): { source: UsageSource; close: () => Promise<void> } {
  const url = o.env.DATABASE_URL;
  if (url) {
    const pool = createPool(url, { max: 2, statementTimeoutMs: 10_000 });
    pool.on('error', () => {});
    return { source: new PostgresUsageSource(pool), close: () => pool.end().catch(() => {}) };
  }
  const b = o.backing;
  if (b.kind === 'redis') {
    return {
      source: new MemoryUsageSource(async (accounts) => (await Promise.all(accounts.map((a) => b.store.usageEvents(a)))).flat()),
      close: async () => {},
    };
  }
  const events = b.sink instanceof MemoryUsageSink ? b.sink.events : [];
  return { source: new MemoryUsageSource(async () => events), close: async () => {} };
}

function exampleModel(snapshot: Snapshot): string {
  const chat = Object.values(snapshot.models)
    .filter((m) => m.type === 'chat')
    .sort((a, b) => a.minTier - b.minTier || (a.id < b.id ? -1 : 1));
  return chat[0]?.id ?? 'mock-mini';
}

export async function mountStandaloneConsole(app: FastifyInstance, o: StandaloneConsoleOptions): Promise<StandaloneConsole> {
  const fromEnv = o.env.SVC_CONSOLE_TOKEN || null;
  const token = fromEnv ?? generateAdminToken();
  const auth = new AdminTokenAuth(token);
  const b = o.backing;
  const redis = b.kind === 'redis' ? b.store : null;
  // People signing in with OpenID Connect get what SVC_CONSOLE_ACCESS_FILE gives their groups; the admin everything.
  const access = new MappedAccess(accessFromEnv(o.env) ?? { groups: {}, users: {} });
  const oidc = oidcFromEnv(
    o.env,
    redis ? { redis: redis.redis, prefix: redis.prefix } : null,
    (err) => app.log.warn({ err }, 'Console: the OpenID provider could not be reached yet (asked again at the next sign-in)'),
    sessionTtlFromEnv(o.env),
  );
  const ttl = sessionTtlFromEnv(o.env);
  const keys = new StandaloneKeys({
    snapshot: o.snapshot,
    configKeys: o.configKeys,
    pepper: o.pepper,
    store: b.store,
    lastUsed: o.lastUsed,
    publisher: b.kind === 'redis' ? new RedisPublisher(b.store) : new MemoryPublisher(b.store, o.snapshot, o.configKeys),
    registry: redis ? new RedisRegistry(redis.redis, redis.prefix) : new MemoryRegistry(o.env.SVC_CONSOLE_STATE || null),
  });
  await keys.restore(Date.now());
  // Rotations' grace periods end on time even when nobody opens the page.
  const timer = setInterval(
    () => void keys.sweep(Date.now()).catch((err: unknown) => app.log.warn({ err }, 'Console: pending revocations not applied yet')),
    10_000,
  );
  timer.unref();
  const usage = usageSource(o);
  // Who did what (the Activity page): in Postgres with DATABASE_URL, else this process's memory (and its log).
  const auditPool = o.env.DATABASE_URL ? createPool(o.env.DATABASE_URL, { max: 2, statementTimeoutMs: 10_000 }) : null;
  auditPool?.on('error', () => {});
  const audit = auditTrailFromEnv(o.env, { pool: auditPool, log: app.log });
  audit.start();
  const billing = standaloneBilling(
    o.env,
    o.snapshot,
    b,
    b.kind === 'redis' ? (a) => b.store.usageEvents(a) : async () => (b.sink instanceof MemoryUsageSink ? b.sink.events : []),
  );
  await app.register(billingWebhookPlugin(billing));
  await app.register(
    consolePlugin({
      billing,
      publicBaseUrl: o.env.SVC_CONSOLE_BASE_URL || undefined,
      authn: auth,
      authz: access,
      oidc,
      tokenSignIn: tokenSignInFromEnv(o.env),
      ownKeysMax: ownKeysMaxFromEnv(o.env),
      keys,
      usage: usage.source,
      now: Date.now,
      exampleModel: exampleModel(o.snapshot),
      sessions: redis ? new RedisSessions(redis.redis, redis.prefix, ttl) : new MemorySessions(ttl),
      signInLimit: redis ? new RedisSignInLimit(redis.redis, redis.prefix) : new MemorySignInLimit(),
      audit,
    }),
  );
  app.addHook('onClose', async () => {
    clearInterval(timer);
    audit.stop();
    await Promise.all([usage.close(), billing.close?.(), auditPool?.end().catch(() => {})]);
  });
  return { generatedToken: fromEnv ? null : token, billing, close: usage.close };
}
