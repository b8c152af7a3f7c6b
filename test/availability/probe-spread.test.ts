// Many routes, one prober: the availability monitor never has more probes in flight than its cap (a fake upstream
// counts the requests open at once), spreads the first rounds of 500 models over a start window and the later ones
// over their interval instead of one burst, and still probes every target once each interval. The monitor's clock is the test's: it moves by whole intervals, and
// each wait is a bounded wait for the probes to arrive.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBoard } from '../../gateway/availability/board.ts';
import { MemoryHistory } from '../../gateway/availability/history.ts';
import { Monitor, START_GAP_MS } from '../../gateway/availability/monitor.ts';
import { compile } from '../../gateway/contract/compile.ts';
import type { Snapshot } from '../../gateway/contract/snapshot.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { ProviderRegistry } from '../../gateway/providers/registry.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const ROUTES = 500;
const CAP = 8;
const INTERVAL_S = 60;

/** An OpenAI-compatible upstream that answers each probe after a short delay and counts probes per model. */
interface CountingUpstream {
  baseUrl: string;
  open: number;
  peak: number;
  probes: Map<string, number>;
  server: Server;
}

async function countingUpstream(delayMs: number): Promise<CountingUpstream> {
  const u: CountingUpstream = { baseUrl: '', open: 0, peak: 0, probes: new Map(), server: createServer() };
  u.server.on('request', (req, res) => {
    u.open++;
    u.peak = Math.max(u.peak, u.open);
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const model = (JSON.parse(body) as { model: string }).model;
      setTimeout(() => {
        u.open--;
        u.probes.set(model, (u.probes.get(model) ?? 0) + 1);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'p' }, finish_reason: 'length' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => u.server.listen(0, '127.0.0.1', resolve));
  u.baseUrl = `http://127.0.0.1:${(u.server.address() as { port: number }).port}/v1`;
  return u;
}

function manyRoutes(baseUrl: string): Snapshot {
  const timeouts = { connectMs: 5000, firstByteMs: 20_000, idleMs: 20_000, totalMs: 30_000 };
  const docs = [
    ...basics().docs,
    ...Array.from({ length: ROUTES }, (_, i) =>
      route(`m${i}`, [{ name: `t${i}`, provider: 'openai', baseUrl, upstreamModel: `m${i}`, timeouts }], { probe: { intervalSeconds: INTERVAL_S } }),
    ),
  ];
  const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  const result = compile(parsed.set, { pepper: TEST_PEPPER });
  if (result.problems.length > 0) throw new Error(JSON.stringify(result.problems));
  return result.snapshot;
}

let upstream: CountingUpstream;
let providers: ProviderRegistry;
let monitor: Monitor | null = null;

beforeAll(async () => {
  upstream = await countingUpstream(20);
  providers = new ProviderRegistry();
});

afterAll(async () => {
  await monitor?.stop();
  await providers?.close();
  await new Promise((resolve) => upstream?.server.close(resolve));
});

const probed = (atLeast: number): number => [...upstream.probes.values()].filter((n) => n >= atLeast).length;

describe('the availability monitor with many routes', () => {
  it('keeps probes under the cap, spreads rounds over the interval and probes every target once an interval', async () => {
    const snapshot = manyRoutes(upstream.baseUrl);
    expect(Object.keys(snapshot.models)).toHaveLength(ROUTES);
    let now = Date.UTC(2026, 10, 27, 6, 0, 0);
    monitor = new Monitor({
      snapshot: () => snapshot,
      providers,
      board: new MemoryBoard(),
      history: new MemoryHistory(),
      concurrency: CAP,
      now: () => now,
    }).start();
    // Start: the first rounds spread over a start window (START_GAP_MS a route): half the window, about half the routes.
    const window = ROUTES * START_GAP_MS;
    now += window / 2;
    const early = await settled(() => probed(1));
    expect(early).toBeGreaterThan(ROUTES / 4);
    expect(early).toBeLessThan((ROUTES * 3) / 4);
    // The whole window: every model once, never more than CAP probes at the upstream.
    now += window / 2;
    await until(() => probed(1) === ROUTES, 120_000, 'every route probed once in the start window');
    expect(upstream.peak).toBeLessThanOrEqual(CAP);
    expect(upstream.peak).toBeGreaterThan(1);
    // Half an interval later, only the models whose place in the interval has come: a share, not all.
    now += (INTERVAL_S * 1000) / 2;
    const half = await settled(() => probed(2));
    expect(half).toBeGreaterThan(ROUTES / 4);
    expect(half).toBeLessThan((ROUTES * 3) / 4);
    // One interval after the start: every model probed again.
    now += (INTERVAL_S * 1000) / 2;
    await until(() => probed(2) === ROUTES, 120_000, 'every route probed again within one interval');
    // And once more the next interval, still under the cap.
    now += INTERVAL_S * 1000;
    await until(() => probed(3) === ROUTES, 120_000, 'every route probed in the next interval');
    expect(upstream.peak).toBeLessThanOrEqual(CAP);
    // The first round, then one at each place in the interval the clock passed (two or three since the first).
    expect(Math.max(...upstream.probes.values())).toBeLessThanOrEqual(4);
  });
});

/** The value once it has stopped changing for a few monitor ticks (bounded). */
async function settled(read: () => number): Promise<number> {
  let last = -1;
  let same = 0;
  await until(
    () => {
      const v = read();
      same = v === last && upstream.open === 0 ? same + 1 : 0;
      last = v;
      return same >= 10;
    },
    120_000,
    'probes settled',
    100,
  );
  return last;
}
