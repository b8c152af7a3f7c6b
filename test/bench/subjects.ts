// What the bench measures, each in its own process(es): the fake upstream called directly, the floor proxy,
// our gateway as `npm start` runs it (production settings: info logging, full pipeline; on Redis when the
// Redis store exists, one process and then two sharing it) and the peer, Portkey's gateway.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../gateway/contract/keys.ts';
import { account, apiKey, mcpServer, plan, route, secret, toYaml, type TargetSpec } from '../helpers/manifests.ts';
import { startCollector } from '../otel/collector.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { freePort, ROOT, startProc, type Proc } from './procs.ts';

export interface Subject {
  name: string;
  /** The processes whose CPU and memory count for this subject. */
  procs: Proc[];
  /** Processes serving requests (several gateways behind one Redis). */
  servers: number;
  urls: string[];
  /** Where each of our gateway processes serves /metrics (SVC_METRICS_PORT); absent for other subjects. */
  metricsUrls?: string[];
  headers: Record<string, string>;
  /** Stops what the subject started besides its processes (the collector of gateway-otel). */
  stop?: () => Promise<void>;
}

const NODE = process.execPath;
export const CHAT_PATH = '/v1/chat/completions';

export function upstream(): Promise<Proc> {
  return startProc({ name: 'upstream', command: NODE, args: ['test/bench/upstream.ts'], ready: /listening (\d+)/ });
}

export function direct(up: Proc): Subject {
  return { name: 'direct', procs: [up], servers: 1, urls: [`http://127.0.0.1:${up.port}`], headers: { authorization: 'Bearer sk-bench' } };
}

export async function floor(up: Proc): Promise<Subject> {
  const p = await startProc({
    name: 'floor',
    command: NODE,
    args: ['test/bench/floor-proxy.ts'],
    env: { UPSTREAM: `http://127.0.0.1:${up.port}/v1` },
    ready: /listening (\d+)/,
  });
  return { name: 'floor', procs: [p], servers: 1, urls: [`http://127.0.0.1:${p.port}`], headers: { authorization: 'Bearer sk-bench' } };
}

/** The bench's fake Bedrock runtime (test/bench/bedrock-upstream.ts), for the gateway-bedrock subject. */
export function bedrockUpstream(): Promise<Proc> {
  return startProc({ name: 'bedrock-upstream', command: NODE, args: ['test/bench/bedrock-upstream.ts'], ready: /listening (\d+)/ });
}

const BENCH_AWS = { AWS_ACCESS_KEY_ID: 'AKIABENCH00000000001', AWS_SECRET_ACCESS_KEY: 'bench-secret-not-secret' };

/**
 * Manifests for the gateway: limits set but never reached, credit that never runs out, the key in a Secret. `bedrock`:
 * the routes go to a Claude model on the bench's fake Bedrock (SigV4 with a key pair from a Secret) instead.
 */
export function manifests(
  upstreamPort: number,
  key: string,
  opts: { cache?: boolean; bedrock?: boolean; mcpPort?: number; endpoints?: boolean; extra?: (baseUrl: string) => object[] } = {},
): string {
  const baseUrl = `http://127.0.0.1:${upstreamPort}/v1`;
  const timeouts = { connectMs: 2000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 60_000 };
  const bedrock = opts.bedrock === true;
  const target = (name: string): TargetSpec =>
    bedrock
      ? {
          name,
          provider: 'bedrock',
          region: 'us-east-1',
          baseUrl: `http://127.0.0.1:${upstreamPort}`,
          upstreamModel: `us.anthropic.claude-${name}-v1:0`,
          credentials: { secretKeyRef: { name: 'bench-aws' } },
          timeouts,
        }
      : { name, provider: 'openai', baseUrl, upstreamModel: name, timeouts };
  return toYaml([
    ...(bedrock ? [secret('bench-aws', BENCH_AWS)] : []),
    plan('bench', { tier: 1, anthropicEndpoint: true, limits: { rpm: 10_000_000, tpm: 10_000_000_000 } }),
    account('bench', 'bench', { credits: [{ id: 'bench-credit', amountUsd: 1_000_000 }] }),
    ...apiKey('bench-key', 'bench', {}, key).docs,
    // With `cache`: the response cache on (docs/billing.md: Response cache); the bench's calls say x-svc-cache: force.
    route('bench-chat', [target('bench-chat')], opts.cache ? { cache: { ttlSeconds: 3600 } } : {}),
    route('bench-paced', [target('bench-paced')], opts.cache ? { cache: { ttlSeconds: 3600 } } : {}),
    // With `mcpPort`: the bench's MCP server behind /mcp/bench-tools, a paid tool (a hold and a settle per call).
    // With `endpoints`: a model of each kind beyond chat on the bench upstream (measure-endpoints.ts), priced as such.
    ...(opts.endpoints
      ? [
          route('bench-text', [{ name: 'bench-text', provider: 'openai', baseUrl, upstreamModel: 'bench-text', timeouts }], { type: 'completions' }),
          route('bench-rerank', [{ name: 'bench-rerank', provider: 'openai', baseUrl, upstreamModel: 'bench-rerank', timeouts }], {
            type: 'rerank',
            pricing: { inputPerMTokUsd: 0.052, perSearchUnitUsd: 0.00208 },
          }),
          route('bench-moderation', [{ name: 'bench-moderation', provider: 'openai', baseUrl, upstreamModel: 'bench-moderation', timeouts }], {
            type: 'moderation',
            pricing: { inputPerMTokUsd: 0.1 },
          }),
          route('bench-whisper', [{ name: 'bench-whisper', provider: 'openai', baseUrl, upstreamModel: 'bench-whisper', timeouts }], {
            type: 'transcription',
            pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 },
          }),
          route('bench-tts', [{ name: 'bench-tts', provider: 'openai', baseUrl, upstreamModel: 'bench-tts', timeouts }], {
            type: 'speech',
            pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 },
          }),
          route('bench-image', [{ name: 'bench-image', provider: 'openai', baseUrl, upstreamModel: 'bench-image', timeouts }], {
            type: 'image',
            pricing: { inputPerMTokUsd: 0, perImage: [{ size: '1024x1024', usd: 0.04 }] },
          }),
        ]
      : []),
    ...(opts.mcpPort ? [mcpServer('bench-tools', { url: `http://127.0.0.1:${opts.mcpPort}/mcp`, pricing: { perCallUsd: 0.000001 }, timeouts })] : []),
    // The scale curves' own objects (more routes, an Anthropic route), given the upstream's base URL.
    ...(opts.extra?.(baseUrl) ?? []),
  ]);
}

/** BENCH_CPU_PROF=DIR: the gateway processes write V8 CPU profiles there (node --cpu-prof) when stopped. */
function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}

/** True once gateway/main.ts takes REDIS_URL for its store (the Redis store landed). */
export function redisStoreAvailable(): boolean {
  if (!existsSync(join(ROOT, 'gateway/state/redis-store.ts'))) return false;
  // gateway/main.ts, or the options module it reads its environment through.
  return ['gateway/main.ts', 'gateway/options.ts'].some((f) => existsSync(join(ROOT, f)) && /REDIS_URL/.test(readFileSync(join(ROOT, f), 'utf8')));
}

export async function redis(): Promise<Proc> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-redis-'));
  return startProc({
    name: 'redis',
    command: 'redis-server',
    port,
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    ready: /Ready to accept connections/,
  });
}

/** `redisCluster`: the seed nodes of a Redis Cluster (the processes get SVC_REDIS_CLUSTER=1). */
export async function gateway(
  up: Proc,
  opts: {
    name: string;
    processes: number;
    redis?: Proc;
    redisCluster?: string;
    env?: Record<string, string>;
    /** The routes' response cache on, and these headers on every call (x-svc-cache: force, cache-control). */
    cache?: Record<string, string>;
    bedrock?: boolean;
    /** The port of the bench's MCP server, served as the McpServer bench-tools. */
    mcpPort?: number;
    /** Also serve a completions, a rerank and a moderation model (measure-endpoints.ts). */
    endpoints?: boolean;
    /** More objects for the manifests (the scale curves), given the upstream's base URL. */
    extra?: (baseUrl: string) => object[];
    /** Milliseconds to wait for the process to be ready (a large config takes longer to compile). */
    startMs?: number;
    /** Another checkout's gateway (BENCH_BEFORE_ROOT: an earlier commit, measured beside this one in one run). */
    root?: string;
  },
): Promise<Subject> {
  const key = generateKey();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const config = join(dir, 'bench.yaml');
  writeFileSync(
    config,
    manifests(up.port, key, {
      cache: opts.cache !== undefined,
      bedrock: opts.bedrock === true,
      mcpPort: opts.mcpPort,
      endpoints: opts.endpoints,
      extra: opts.extra,
    }),
  );
  const env: Record<string, string> = {
    SVC_CONFIG: config,
    PORT: '0',
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    SVC_KEY_PEPPER: 'bench-pepper-not-secret',
    ...opts.env,
  };
  if (opts.redis) env.REDIS_URL = `redis://127.0.0.1:${opts.redis.port}`;
  if (opts.redisCluster) Object.assign(env, { REDIS_URL: opts.redisCluster, SVC_REDIS_CLUSTER: '1' });
  const procs: Proc[] = [];
  const metricsUrls: string[] = [];
  // One after the other: with REDIS_URL each process publishes the same config, which must stay idempotent.
  for (let i = 0; i < opts.processes; i++) {
    // Each its own metrics port, never the default 9090 (other processes on this machine may hold it).
    const metricsPort = await freePort();
    metricsUrls.push(`http://127.0.0.1:${metricsPort}`);
    procs.push(
      await startProc({
        name: `${opts.name}#${i}`,
        command: NODE,
        args: [...profileArgs(), join(opts.root ?? ROOT, 'gateway/main.ts')],
        env: { ...env, SVC_METRICS_PORT: String(metricsPort) },
        ready: /Server listening at http:\/\/127\.0\.0\.1:(\d+)/,
        timeoutMs: opts.startMs,
      }),
    );
  }
  return {
    name: opts.name,
    procs: opts.redis ? [...procs, opts.redis] : procs,
    servers: procs.length,
    urls: procs.map((p) => `http://127.0.0.1:${p.port}`),
    metricsUrls,
    headers: { authorization: `Bearer ${key}`, ...opts.cache },
  };
}

/**
 * The settle's durability, side by side on one Redis and one throwaway Postgres (DATABASE_URL: the process runs the
 * usage exporter in both): `durable` sets SVC_SETTLE_DURABILITY=postgres, so each call's usage event is committed in
 * Postgres before its answer ends; the other leaves it to the exporter (the default).
 */
export async function gatewayPostgres(up: Proc, redisProc: Proc, durable: boolean): Promise<Subject> {
  const pg = await startPostgres(durable ? 'bench_durable' : 'bench_pg', { own: true });
  try {
    const env: Record<string, string> = { DATABASE_URL: pg.url, ...(durable ? { SVC_SETTLE_DURABILITY: 'postgres' } : {}) };
    const s = await gateway(up, { name: durable ? 'gateway-redis-pg-durable' : 'gateway-redis-pg', processes: 1, redis: redisProc, env });
    // With DATABASE_URL a fresh Redis is first rebuilt from the (empty) ledger: 503 until then, not ready.
    const readyz = `${s.metricsUrls?.[0] as string}/readyz`;
    for (
      let i = 0;
      i < 600 &&
      (await fetch(readyz).then(
        (r) => r.status,
        () => 0,
      )) !== 200;
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    return { ...s, stop: () => pg.stop() };
  } catch (err) {
    await pg.stop();
    throw err;
  }
}

/**
 * The response cache on Redis, side by side: `hit` repeats one cacheable call (every call after the first is
 * answered from the cache); `miss` sends the same calls with cache-control: no-cache, so each goes upstream and its
 * answer is written to the cache (the lookup a real miss also makes, one read-only script, is left out).
 */
export function gatewayCache(up: Proc, redisProc: Proc, kind: 'hit' | 'miss'): Promise<Subject> {
  const headers: Record<string, string> = kind === 'hit' ? { 'x-svc-cache': 'force' } : { 'x-svc-cache': 'force', 'cache-control': 'no-cache' };
  return gateway(up, { name: `gateway-redis-cache-${kind}`, processes: 1, redis: redisProc, cache: headers });
}

/** The gateway with tracing on (default sampler: every call without a parent is sampled), exporting to a real
 * OpenTelemetry Collector (test/otel/collector.ts), whose CPU is not counted. */
export async function gatewayTraced(up: Proc): Promise<Subject> {
  const collector = await startCollector();
  const s = await gateway(up, { name: 'gateway-otel', processes: 1, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint } });
  return { ...s, stop: () => collector.stop() };
}

/**
 * The gateway with its routes on Claude through AWS Bedrock (the bench's fake runtime, its own process, not counted):
 * next to `gateway`, it adds SigV4 signing of every call, the OpenAI-to-Anthropic translation, and for streams the
 * decoding of AWS event-stream frames.
 */
export async function gatewayBedrock(): Promise<Subject> {
  const up = await bedrockUpstream();
  const s = await gateway(up, { name: 'gateway-bedrock', processes: 1, bedrock: true });
  return { ...s, stop: () => up.stop() };
}

/** Portkey's gateway (npm @portkey-ai/gateway, its own Node server), routed to our upstream as a custom host. */
export async function portkey(up: Proc): Promise<Subject> {
  const port = await freePort();
  const p = await startProc({
    name: 'portkey',
    command: NODE,
    port,
    timeoutMs: 60_000,
    args: ['--import', './test/bench/portkey-shim.ts', 'node_modules/@portkey-ai/gateway/build/start-server.js', `--port=${port}`, '--headless'],
    env: { NODE_ENV: 'production' },
    ready: /Ready for connections/,
  });
  return {
    name: 'portkey',
    procs: [p],
    servers: 1,
    urls: [`http://127.0.0.1:${port}`],
    headers: { authorization: 'Bearer sk-bench', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `http://127.0.0.1:${up.port}/v1` },
  };
}

/** The bench's fake MCP server (test/bench/mcp-upstream.ts). */
export function mcpUpstream(): Promise<Proc> {
  return startProc({ name: 'mcp-upstream', command: NODE, args: ['test/bench/mcp-upstream.ts'], ready: /listening (\d+)/ });
}

/**
 * One gateway process (in-memory store) serving the chat routes and the bench's MCP server as bench-tools: the
 * subject of the paired figure, a proxied tools/call beside a model call (measure-mcp.ts). The MCP server's own
 * process is not counted.
 */
export async function gatewayMcp(up: Proc): Promise<Subject & { mcp: Proc }> {
  const mcp = await mcpUpstream();
  const s = await gateway(up, { name: 'gateway-mcp', processes: 1, mcpPort: mcp.port });
  return { ...s, mcp, stop: () => mcp.stop() };
}

/**
 * One gateway process (in-memory store) serving chat and a model of each other kind (completions, rerank, moderation)
 * on the bench upstream: the subject of the endpoints table, each call beside its upstream called directly
 * (measure-endpoints.ts).
 */
export function gatewayEndpoints(up: Proc): Promise<Subject> {
  return gateway(up, { name: 'gateway-endpoints', processes: 1, endpoints: true });
}

/**
 * One gateway process (in-memory store) for the stored-Responses figure (measure-responses.ts); with `postgres`, its
 * stored responses in a throwaway Postgres (DATABASE_URL: the process also writes usage there), whose server is not
 * counted.
 */
export async function gatewayResponses(up: Proc, postgres: boolean): Promise<Subject> {
  if (!postgres) return gateway(up, { name: 'gateway-responses', processes: 1 });
  const pg = await startPostgres('bench_responses', { own: true });
  try {
    const s = await gateway(up, { name: 'gateway-responses-pg', processes: 1, env: { DATABASE_URL: pg.url } });
    return { ...s, stop: () => pg.stop() };
  } catch (err) {
    await pg.stop();
    throw err;
  }
}
