// What a refusal at a key's TPM cap costs Redis when the key's window is full (`npm run bench -- --leases` prints it
// after the lease table): the window filled with calls, then refusals one at a time, with redis-server's CPU per
// refusal. A refusal reads the window's oldest calls until enough tokens would leave it, for its retry-after.
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { account, keyRec, request, snapshot } from '../../gateway/state/store-suite-fixtures.ts';
import { cpuSeconds } from './procs.ts';
import { redis } from './subjects.ts';

export interface RefusalFigure {
  windowCalls: number;
  wallMs: number;
  redisCpuUs: number;
}

async function point(port: number, pid: number, calls: number, minMs: number): Promise<RefusalFigure> {
  const store = await RedisStore.connect({ url: `redis://127.0.0.1:${port}`, prefix: `refusal-${calls}` });
  try {
    const acct = account({ trialCreditNano: 1e15 });
    const key = keyRec({ tpm: calls * 10 });
    await store.applyConfig(snapshot([acct]), [key]);
    const t = Date.now();
    // The window filled: `calls` calls of 10 tokens, spread over its first half.
    for (let i = 0; i < calls; i += 500) {
      const n = Math.min(500, calls - i);
      await Promise.all(Array.from({ length: n }, (_, j) => store.admit(request(key, acct, t + ((i + j) * 30_000) / calls, { tokens: 10 }))));
    }
    const r0 = cpuSeconds(pid);
    const t0 = performance.now();
    // At least `minMs` of refusals (CPU time is read in 10 ms ticks), at least 20 of them.
    let done = 0;
    while (done < 20 || performance.now() - t0 < minMs) {
      const d = await store.admit(request(key, acct, t + 30_000, { tokens: 100 }));
      if (d.ok) throw new Error('the refusal bench admitted a call past its TPM cap');
      done++;
    }
    return { windowCalls: calls, wallMs: (performance.now() - t0) / done, redisCpuUs: ((cpuSeconds(pid) - r0) * 1e6) / done };
  } finally {
    await store.close();
  }
}

export async function refusalCost(quick: boolean): Promise<RefusalFigure[]> {
  const server = await redis();
  try {
    const out: RefusalFigure[] = [];
    for (const calls of quick ? [100, 5_000] : [100, 5_000, 50_000]) out.push(await point(server.port, server.pid, calls, quick ? 300 : 2000));
    return out;
  } finally {
    await server.stop();
  }
}

export function refusalTable(rows: RefusalFigure[]): string {
  const head = "| calls in the key's window | wall time per refusal (ms) | redis-server CPU per refusal (µs) |\n| --- | --- | --- |";
  return [head, ...rows.map((r) => `| ${r.windowCalls.toLocaleString('en-US')} | ${r.wallMs.toFixed(3)} | ${Math.round(r.redisCpuUs)} |`)].join('\n');
}
