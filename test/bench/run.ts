// npm run bench: our gateway's overhead and throughput next to the floor (the fake upstream called directly, a
// bare fastify + undici proxy) and a peer (Portkey's gateway), in one run, on this machine, loopback only.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { FULL, measure, QUICK, type SubjectResult } from './measure.ts';
import { mcpReport, measureMcp } from './measure-mcp.ts';
import { endpointsReport, measureEndpoints } from './measure-endpoints.ts';
import { measureResponses, responsesReport } from './measure-responses.ts';
import { stopAll, type Proc } from './procs.ts';
import { report } from './report.ts';
import { scaleStartup } from './scale-startup.ts';
import { CURVES, scale, type Curve } from './scale.ts';
import { FULL_POINT_MS, QUICK_POINT_MS } from './scale-common.ts';
import { parseBytes } from './cgroup.ts';
import { flushWithLeases, leaseBench, leaseTable, liveLeaseTable } from './lease-store.ts';
import { refusalCost, refusalTable } from './refusal-cost.ts';
import { guardrailCost } from './guardrail-cost.ts';
import { soak } from './soak.ts';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';
import {
  direct,
  floor,
  gateway,
  gatewayBedrock,
  gatewayCache,
  gatewayEndpoints,
  gatewayMcp,
  gatewayPostgres,
  gatewayResponses,
  gatewayTraced,
  portkey,
  redis,
  redisStoreAvailable,
  upstream,
  type Subject,
} from './subjects.ts';

const HELP = `npm run bench [-- options]

  --quick              a short smoke run (well under a minute): every subject, every scenario, tiny durations
  --soak MINUTES       memory soak of the gateway at a moderate steady rate instead of the comparison
  --subjects LIST      comma-separated subset of: direct,floor,gateway,gateway-bedrock,gateway-redis,gateway-redis-leases
                       (admission leases on),gateway-redis-x2,
                       gateway-redis-cache-miss,gateway-redis-cache-hit (the response cache: a miss that stores, a hit),portkey,
                       gateway-mcp (a proxied MCP tools/call beside a model call, each beside its upstream direct),
                       gateway-endpoints (chat, legacy completions plain and streamed, rerank, moderations, a transcription,
                       speech, an image generation and a batch file upload, each beside
                       its upstream direct),
                       gateway-responses (stored Responses: store false, store true, previous_response_id beside chat;
                       in memory); or of the
                       subjects not run by default: gateway-otel (tracing on, to a real collector), gateway-redis-x4 and gateway-cluster, -x2, -x4 (1, 2, 4
                       gateway processes on a 3-master, 3-replica Redis Cluster), gateway-redis-pg and gateway-redis-pg-durable (Redis and
                       Postgres, SVC_SETTLE_DURABILITY off and =postgres: the cost of writing each settle to Postgres before answering),
                       gateway-responses-pg (the stored-Responses figure with them in Postgres), gateway-redis-before and
                       gateway-redis-leases-before (gateway-redis and -leases from BENCH_BEFORE_ROOT=DIR, another checkout)
  --json FILE          also write the raw results as JSON
  --leases             instead of the comparison: admit+settle pairs through the Redis store, leases off and on
                       (gateway CPU, redis-server CPU, scripts and Redis commands per pair; --quick: a short run),
                       then a flush while the account holds 1 to 1,000 leases, and what a refusal at a key's TPM
                       cap costs Redis with 100 to 50,000 calls in its window
  --scale              instead of the comparison: the cost curves, a table each (keys in Redis, ModelRoutes, prompt
                       size, open streams, gateway processes on one Redis, the operator on a real API server); about
                       15 minutes. --quick: each curve's smallest and largest point, short; --max N: stop the keys at N
                       (default 1000000, quick 100000); --min N: start the keys
                       and ApiKeys at N (one large point alone); --curves LIST: a subset of keys,routes,prompt,streams,replicas,operator;
                       --operator-memory SIZE (512Mi, 1Gi): the operator in a memory cgroup of that size, as a pod
                       limit holds it (root; its peak is reported, and a kill for memory ends the point)
  --guardrails         instead of the comparison: the gateway's CPU per chat call with every local guardrail detector on
                       the request stage beside the same call without a Guardrail, by prompt size (1 to 100 KB), and the
                       added µs per KB of prompt (--quick: 1 and 10 KB, few calls)
  --scale-startup      instead of the comparison: how long writing the config to Redis takes (applyConfig), with
                       --keys N keys (default 50000), on one redis-server and (with --cluster) on a Redis Cluster
  -h, --help           this help

Every server runs in its own process on 127.0.0.1 and is stopped at the end. The gateway runs as npm start
does (info logging, full pipeline); on Redis too once the Redis store exists (one process, then two on one Redis).`;

const ALL = [
  'direct',
  'floor',
  'gateway',
  'gateway-bedrock',
  'gateway-redis',
  'gateway-redis-leases',
  'gateway-redis-x2',
  'gateway-redis-cache-miss',
  'gateway-redis-cache-hit',
  'portkey',
  'gateway-mcp',
  'gateway-endpoints',
  'gateway-responses',
];

function machine(): string {
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  return `Machine: ${nproc} CPUs (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}

type Starter = (up: Proc, redisProc: () => Promise<Proc>, cluster: () => Promise<TestRedisCluster>) => Promise<Subject>;

const STARTERS: Record<string, Starter> = {
  direct: async (up) => direct(up),
  floor: (up) => floor(up),
  gateway: (up) => gateway(up, { name: 'gateway', processes: 1 }),
  'gateway-bedrock': () => gatewayBedrock(),
  'gateway-redis': async (up, r) => gateway(up, { name: 'gateway-redis', processes: 1, redis: await r() }),
  // Leased admission on (SVC_ADMISSION_LEASES=1): admitted and settled from a lease, settles written in batches.
  'gateway-redis-leases': async (up, r) => gateway(up, { name: 'gateway-redis-leases', processes: 1, redis: await r(), env: { SVC_ADMISSION_LEASES: '1' } }),
  // The same two from another checkout (BENCH_BEFORE_ROOT=DIR, node_modules linked there): before and after in one run.
  'gateway-redis-before': async (up, r) => gateway(up, { name: 'gateway-redis-before', processes: 1, redis: await r(), root: beforeRoot() }),
  'gateway-redis-leases-before': async (up, r) =>
    gateway(up, { name: 'gateway-redis-leases-before', processes: 1, redis: await r(), env: { SVC_ADMISSION_LEASES: '1' }, root: beforeRoot() }),
  'gateway-redis-x2': async (up, r) => gateway(up, { name: 'gateway-redis-x2', processes: 2, redis: await r() }),
  'gateway-redis-cache-miss': async (up, r) => gatewayCache(up, await r(), 'miss'),
  'gateway-redis-cache-hit': async (up, r) => gatewayCache(up, await r(), 'hit'),
  portkey: (up) => portkey(up),
  'gateway-otel': (up) => gatewayTraced(up),
  'gateway-redis-x4': async (up, r) => gateway(up, { name: 'gateway-redis-x4', processes: 4, redis: await r() }),
  'gateway-redis-pg': async (up, r) => gatewayPostgres(up, await r(), false),
  'gateway-redis-pg-durable': async (up, r) => gatewayPostgres(up, await r(), true),
  'gateway-cluster': async (up, _r, c) => gateway(up, { name: 'gateway-cluster', processes: 1, redisCluster: (await c()).url }),
  'gateway-cluster-x2': async (up, _r, c) => gateway(up, { name: 'gateway-cluster-x2', processes: 2, redisCluster: (await c()).url }),
  'gateway-cluster-x4': async (up, _r, c) => gateway(up, { name: 'gateway-cluster-x4', processes: 4, redisCluster: (await c()).url }),
};
function beforeRoot(): string {
  const root = process.env.BENCH_BEFORE_ROOT;
  if (!root) throw new Error('the -before subjects need BENCH_BEFORE_ROOT=DIR (a checkout of the earlier commit, node_modules linked)');
  return root;
}

const SCALING = [
  'gateway-otel',
  'gateway-redis-x4',
  'gateway-redis-before',
  'gateway-redis-leases-before',
  'gateway-redis-pg',
  'gateway-redis-pg-durable',
  'gateway-cluster',
  'gateway-cluster-x2',
  'gateway-cluster-x4',
  'gateway-responses-pg',
];

async function compare(names: string[], quick: boolean, log: (l: string) => void): Promise<{ results: SubjectResult[]; extra: string[] }> {
  const up = await upstream();
  const results: SubjectResult[] = [];
  const extra: string[] = [];
  for (const name of names) {
    if (name === 'gateway-mcp') {
      // A table of its own: the paired figure of MCP tools/call and model calls (measure-mcp.ts).
      const s = await gatewayMcp(up);
      log(`measuring ${name}...`);
      try {
        extra.push(mcpReport(await measureMcp(s, up, quick ? QUICK : FULL)));
      } finally {
        await Promise.all(s.procs.map((p) => p.stop()));
        await s.stop?.();
      }
      continue;
    }
    if (name === 'gateway-endpoints') {
      // A table of its own: each endpoint's hot-path cost beside chat (measure-endpoints.ts).
      const s = await gatewayEndpoints(up);
      log(`measuring ${name}...`);
      try {
        extra.push(endpointsReport(await measureEndpoints(s, up, quick ? QUICK : FULL)));
      } finally {
        await Promise.all(s.procs.map((p) => p.stop()));
      }
      continue;
    }
    if (name === 'gateway-responses' || name === 'gateway-responses-pg') {
      // A table of its own: stored Responses beside a chat call on one gateway (measure-responses.ts).
      const pg = name === 'gateway-responses-pg';
      const s = await gatewayResponses(up, pg);
      log(`measuring ${name}...`);
      try {
        const title = pg ? 'kept in Postgres (one gateway process, DATABASE_URL)' : 'kept in memory (one gateway process, in-memory store)';
        extra.push(responsesReport(title, await measureResponses(s, quick ? QUICK : FULL)));
      } finally {
        await Promise.all(s.procs.map((p) => p.stop()));
        await s.stop?.();
      }
      continue;
    }
    let redisProc: Proc | null = null;
    const r = async (): Promise<Proc> => (redisProc = await redis());
    let cluster: TestRedisCluster | null = null;
    const c = async (): Promise<TestRedisCluster> => (cluster = await startRedisCluster('bench'));
    const subject = await (STARTERS[name] as Starter)(up, r, c);
    log(`measuring ${name}...`);
    try {
      results.push(await measure(subject, quick ? QUICK : FULL));
    } finally {
      // The shared upstream stays; everything else the subject started goes, so idle processes never compete.
      await Promise.all(subject.procs.filter((p) => p !== up).map((p) => p.stop()));
      await (redisProc as Proc | null)?.stop();
      await (cluster as TestRedisCluster | null)?.stop();
      await subject.stop?.();
    }
  }
  await up.stop();
  return { results, extra };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      soak: { type: 'string' },
      subjects: { type: 'string' },
      json: { type: 'string' },
      'scale-startup': { type: 'boolean' },
      scale: { type: 'boolean' },
      max: { type: 'string' },
      min: { type: 'string' },
      curves: { type: 'string' },
      'operator-memory': { type: 'string' },
      leases: { type: 'boolean' },
      guardrails: { type: 'boolean' },
      keys: { type: 'string' },
      cluster: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  const log = (l: string): void => void process.stderr.write(`${l}\n`);
  const redisOk = redisStoreAvailable();
  const started = Date.now();
  const header = machine();
  if (values['scale-startup']) {
    const keys = Number(values.keys ?? 50_000);
    if (!Number.isInteger(keys) || keys < 1) throw new Error('--keys takes a whole number of keys');
    process.stdout.write(`${header}\n\n${await scaleStartup(keys, values.cluster === true, log)}\n`);
    return;
  }
  if (values.scale) {
    // Quick: at most 100,000 keys unless --max says otherwise (a million take minutes to write).
    const maxKeys = Number(values.max ?? (values.quick ? 100_000 : 1_000_000));
    if (!Number.isInteger(maxKeys) || maxKeys < 10) throw new Error('--max takes a whole number of keys, at least 10');
    const minKeys = Number(values.min ?? 0);
    if (!Number.isInteger(minKeys) || minKeys < 0) throw new Error('--min takes a whole number of keys');
    const curves = values.curves ? values.curves.split(',').map((x) => x.trim()) : [...CURVES];
    const unknown = curves.filter((c) => !(CURVES as readonly string[]).includes(c));
    if (unknown.length > 0) throw new Error(`unknown curves: ${unknown.join(', ')} (known: ${CURVES.join(', ')})`);
    const quick = values.quick === true;
    const operatorMemoryBytes = values['operator-memory'] === undefined ? undefined : parseBytes(values['operator-memory']);
    const r = await scale(curves as Curve[], { quick, maxKeys, minKeys, operatorMemoryBytes, pointMs: quick ? QUICK_POINT_MS : FULL_POINT_MS }, log);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    process.stdout.write(`${header}
Mode: scale${quick ? ', quick' : ''}, ${seconds} s

${r.text}
`);
    if (r.failed > 0) process.exitCode = 1;
    return;
  }
  if (values.guardrails) {
    process.stdout.write(`${header}\n\n${await guardrailCost(values.quick === true, log)}\n`);
    return;
  }
  if (values.leases) {
    const rows = await leaseBench(values.quick ? 2000 : undefined);
    const live = await flushWithLeases(values.quick === true);
    const refusals = await refusalCost(values.quick === true);
    process.stdout.write(
      `${header}\n\n${leaseTable(rows)}\n\nA flush while the account holds many leases:\n\n${liveLeaseTable(live)}\n\nA refusal at the TPM cap:\n\n${refusalTable(refusals)}\n`,
    );
    return;
  }
  if (values.soak !== undefined) {
    const minutes = Number(values.soak);
    if (!(minutes > 0)) throw new Error('--soak takes a number of minutes');
    const up = await upstream();
    const s = await gateway(up, redisOk ? { name: 'gateway-redis', processes: 1, redis: await redis() } : { name: 'gateway', processes: 1 });
    const text = await soak(s, minutes, log);
    process.stdout.write(`${header}\n\n${text}\n`);
    return;
  }
  const wanted = values.subjects ? values.subjects.split(',').map((x) => x.trim()) : ALL;
  const unknown = wanted.filter((w) => !ALL.includes(w) && !SCALING.includes(w));
  if (unknown.length > 0) throw new Error(`unknown subjects: ${unknown.join(', ')}`);
  const names = [...ALL, ...SCALING].filter((n) => wanted.includes(n) && (redisOk || !n.startsWith('gateway-redis')));
  if (!redisOk) log('The Redis store is not in this build yet: the gateway runs on its in-memory store.');
  const { results, extra } = await compare(names, values.quick === true, log);
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  const store = redisOk ? 'gateway rows on the in-memory store and on Redis' : 'gateway on the in-memory store (no Redis store yet)';
  const after = `load average at the end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
  process.stdout.write(
    `${header}, ${after}\nMode: ${values.quick ? 'quick' : 'full'}, ${store}, ${seconds} s\n\n${report(results)}${extra.map((x) => `\n${x}`).join('')}`,
  );
  if (values.json) writeFileSync(values.json, `${JSON.stringify({ header, results }, null, 2)}\n`);
}

const bail = (signal: NodeJS.Signals): void => {
  void stopAll().then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
};
process.once('SIGINT', bail);
process.once('SIGTERM', bail);
try {
  await main();
} finally {
  await stopAll();
}
