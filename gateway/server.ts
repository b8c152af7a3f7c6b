// build(): the gateway's HTTP server over a set of dependencies (the test helper and main.ts both use it).
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { gatewayLogger } from './logger.ts';
import { anthropicRoutes } from './http/anthropic-routes.ts';
import { jsonBodies } from './http/body-parser.ts';
import { cors } from './http/cors.ts';
import { clientErrorHandler } from './http/client-errors.ts';
import { DEFAULT_TIMEOUTS, type ServerTimeouts } from './http/timeouts.ts';
import { fastifyTrustProxy, type TrustProxy } from './contract/trust-proxy.ts';
import { dialectErrors, dialectNotFound, frameworkError } from './http/errors.ts';
import { lazyChildLogger } from './http/lazy-logger.ts';
import { Metrics } from './http/metrics.ts';
import type { TracingSdk } from './tracing/start.ts';
import { mcpRoutes } from './http/mcp-routes.ts';
import type { McpSettings } from './mcp/settings.ts';
import { openAIRoutes } from './http/openai-routes.ts';
import { cohereRoutes } from './http/text-routes.ts';
import type { ConfigSource, GatewayDeps } from './pipeline/context.ts';
import type { Drain } from './lifecycle/drain.ts';
import { ProviderRegistry } from './providers/registry.ts';
import type { Store } from './state/store.ts';
import { MemoryResponseStore } from './stored-responses/memory.ts';
import { StoredResponses } from './stored-responses/service.ts';
import { DEFAULT_STORED_RESPONSES, type ResponseStore, type StoredResponsesSettings } from './stored-responses/types.ts';
import { keyCacheOf } from './pipeline/key-cache.ts';
import { BatchJob } from './batches/job.ts';
import { MemoryBatchRecords, type BatchRecords } from './batches/records.ts';
import type { BatchDeps } from './batches/service.ts';
import { DEFAULT_BATCH_SETTINGS, type BatchSettings } from './batches/settings.ts';
import { batchRoutes } from './http/batch-routes.ts';
import { messageBatchRoutes } from './http/message-batch-routes.ts';
import { filesRoutes } from './http/files-routes.ts';

export interface BuildOptions {
  config: ConfigSource;
  store: Store;
  pepper: string;
  providers?: ProviderRegistry;
  metrics?: Metrics;
  logLevel?: string;
  bodyLimit?: number;
  ready?: () => boolean;
  /** Graceful shutdown: /readyz answers 503 once it started, and it counts and can end the calls in flight. */
  drain?: Drain;
  /** The process's logger (logger.ts), made before the server; by default one at logLevel. */
  logger?: Logger;
  /** Limits on slow clients (default: DEFAULT_TIMEOUTS; the entry points pass what gateway/options.ts parsed). */
  timeouts?: Partial<ServerTimeouts>;
  /** SVC_TRUST_PROXY as parsed (contract/trust-proxy.ts): which hops' X-Forwarded-For to believe (default: none). */
  trustProxy?: TrustProxy;
  /** The call pipeline's clock (default Date.now); tests step it. */
  now?: () => number;
  /** The OpenTelemetry SDK (tracing/sdk.ts) when tracing is on; shut down (queued spans exported) when the app closes. */
  tracing?: TracingSdk | null;
  /** SVC_CACHE_ACCOUNT_MAX_BYTES as parsed: the response cache's per-account byte budget (default 64 MiB). */
  cacheAccountBytes?: number;
  /** /mcp's settings (SVC_MCP_*); default: gateway/mcp/settings.ts. */
  mcp?: McpSettings;
  /** SVC_SETTLE_DURABILITY=postgres: settle (the store writes the event to Postgres) before the answer ends. */
  settleBeforeAnswer?: boolean;
  /** Where stored Responses live (default: this process's memory) and their settings (SVC_RESPONSES_*). */
  responses?: { store?: ResponseStore; settings?: StoredResponsesSettings };
  /** SVC_KEY_CACHE_SIZE: key records each process keeps (pipeline/key-cache.ts; default 10,000). */
  keyCacheSize?: number;
  /** Files and batches: where they are kept (default: in memory), their settings, and whether this process runs the
   * job that polls them (default: yes; every process may, one works on a batch at a time). */
  batches?: { records?: BatchRecords; settings?: Partial<BatchSettings>; job?: boolean };
}

export async function build(opts: BuildOptions): Promise<{ app: FastifyInstance; deps: GatewayDeps; metrics: Metrics; batches: BatchJob }> {
  const t = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  const app = Fastify({
    // Node checks the header and request deadlines on a timer: often enough that a short deadline is kept.
    http: { headersTimeout: Math.min(t.headersMs, t.requestMs), connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(t.headersMs / 4))) },
    requestTimeout: t.requestMs,
    connectionTimeout: t.idleMs,
    clientErrorHandler,
    // Model ids may be up to 200 characters (the ModelRoute schema): the path parameter takes them.
    routerOptions: { maxParamLength: 256 },
    frameworkErrors: frameworkError,
    // Typed as fastify's base logger, so plugins and routes take this instance like any other.
    loggerInstance: (opts.logger ?? gatewayLogger(opts.logLevel ?? process.env.LOG_LEVEL ?? 'info')) as FastifyBaseLogger,
    bodyLimit: opts.bodyLimit ?? 10 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    return503OnClosing: true,
    // Longer than a load balancer's usual 60 s idle timeout (so the balancer closes first), unless idleMs is shorter.
    keepAliveTimeout: Math.min(65_000, t.idleMs),
    trustProxy: fastifyTrustProxy(opts.trustProxy ?? false),
  });
  await app.register(jsonBodies);
  const metrics = opts.metrics ?? new Metrics({ exemplars: Boolean(opts.tracing) });
  const deps: GatewayDeps = {
    config: opts.config,
    store: opts.store,
    providers: opts.providers ?? new ProviderRegistry(),
    pepper: opts.pepper,
    metrics,
    log: app.log,
    now: opts.now ?? Date.now,
    lifecycle: opts.drain,
    tracer: opts.tracing?.calls,
    cacheAccountBytes: opts.cacheAccountBytes,
    settleBeforeAnswer: opts.settleBeforeAnswer,
  };
  const responseStore = opts.responses?.store ?? new MemoryResponseStore();
  deps.responses = new StoredResponses(responseStore, opts.responses?.settings ?? DEFAULT_STORED_RESPONSES, app.log);
  app.addHook('onClose', async () => responseStore.close());
  metrics.watchBalances(async () => {
    const now = Date.now();
    return Promise.all(
      Object.keys(deps.config.current().accounts)
        .sort()
        .map(async (account) => ({ account, balanceNano: (await deps.store.view(account, '', now)).balanceNano })),
    );
  });
  if (opts.tracing) metrics.watchSpans(opts.tracing.counts);
  metrics.watchKeyCache(keyCacheOf(opts.store, { maxEntries: opts.keyCacheSize }));
  metrics.alerts.watchKeySpend(async (account, key) => (await deps.store.view(account, key, Date.now())).keyMonthSpendNano);
  const count = (code: string): void => metrics.error(code);
  await app.register(cors);
  // The root answers in OpenAI's shape (health, unknown paths); each dialect's routes are a plugin of their own.
  dialectErrors(app, 'openai', count);
  dialectNotFound(app, 'openai');
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    if (opts.drain?.draining) return reply.code(503).send({ status: 'draining' });
    const ready = opts.ready?.() ?? true;
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'starting' });
  });
  const batchDeps: BatchDeps = {
    config: deps.config,
    store: deps.store,
    records: opts.batches?.records ?? new MemoryBatchRecords(),
    settings: { ...DEFAULT_BATCH_SETTINGS, ...opts.batches?.settings },
    now: deps.now,
  };
  const job = new BatchJob({ ...batchDeps, providers: deps.providers, log: app.log });
  if (opts.batches?.job !== false) job.start();
  await app.register(async (api) => {
    dialectErrors(api, 'openai', count);
    openAIRoutes(api, deps);
  });
  await app.register(async (api) => {
    dialectErrors(api, 'openai', count);
    filesRoutes(api, deps, batchDeps);
    batchRoutes(api, deps, batchDeps);
  });
  await app.register(
    async (api) => {
      dialectErrors(api, 'anthropic', count);
      dialectNotFound(api, 'anthropic');
      anthropicRoutes(api, deps);
      messageBatchRoutes(api, deps, batchDeps);
    },
    { prefix: '/anthropic' },
  );
  await app.register(
    async (api) => {
      dialectErrors(api, 'cohere', count);
      dialectNotFound(api, 'cohere');
      cohereRoutes(api, deps);
    },
    { prefix: '/cohere' },
  );
  // MCP (gateway/mcp/): JSON-RPC errors of its own.
  await app.register(mcpRoutes(deps, opts.tracing?.mcp, opts.mcp), { prefix: '/mcp' });
  app.addHook('onClose', async () => {
    await job.stop();
    await batchDeps.records.close();
    await opts.tracing?.shutdown();
    await deps.providers.close();
  });
  return { app, deps, metrics, batches: job };
}
