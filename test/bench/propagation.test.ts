// Propagation times as users see them, over repeated runs on 3 gateway processes: from the start of `kubectl apply`
// of a new ApiKey until every gateway answers 200 with its generated key, from the start of `kubectl patch`
// revoked=true until every gateway answers 401, and from the start of a ModelRoute edit until every gateway calls the
// new target. Prints p50 and max next to the goal (under 250 ms from the write); a benchmark, so no figure is
// asserted: a loaded machine is slow, not wrong (test/operator/lifecycle.test.ts checks the behaviour in npm test).
// `npm run test:bench` runs it; SVC_PROPAGATION_RUNS=20 for more runs.
import { loadavg } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../helpers/fleet.ts';
import { gatewayReady, install, startCluster, type Cluster, type Installation } from '../operator/harness.ts';
import { secretKey, waitFor } from '../operator/kube-api.ts';
import { summarize, untilAll } from '../operator/propagation.ts';

const RUNS = Number(process.env.SVC_PROPAGATION_RUNS ?? 10);
const GATEWAYS = 3;
const API = 'gateway.svc.dev/v1alpha1';
/** The goal for a change stored by the API server to reach every gateway. */
const GOAL_MS = 250;
/** Waits end here only on a hang. */
const HANG_MS = 30_000;

let cluster: Cluster;
let inst: Installation;
/** A key that stays valid across the runs, to see which target serves the route. */
let editor: string;

beforeAll(async () => {
  cluster = await startCluster('propagation');
  inst = await install(cluster, 'propagation');
  await inst.startOperator('op-0');
  for (let i = 0; i < GATEWAYS; i++) await inst.startGateway();
  await Promise.all(inst.gateways.map((g) => gatewayReady(g, 60_000, () => inst.operators[0]?.output() ?? '')));
  await inst.kubectlOk(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: API, kind: 'Plan', metadata: { name: 'p' }, spec: { tier: 1 } },
        { apiVersion: API, kind: 'Account', metadata: { name: 'acme' }, spec: { planRef: 'p', credits: [{ id: 'c', amountUsd: 100 }] } },
        { apiVersion: API, kind: 'ApiKey', metadata: { name: 'editor' }, spec: { accountRef: 'acme' } },
        {
          apiVersion: API,
          kind: 'ModelRoute',
          metadata: { name: 'mock-mini' },
          spec: { pricing: { inputPerMTokUsd: 1 }, targets: [{ name: 'mock-0', provider: 'mock' }] },
        },
      ],
    }),
  );
  editor = await waitFor('the editor key', () => secretKey(cluster.api, inst.ns, 'editor-key'), HANG_MS);
}, 300_000);

afterAll(async () => {
  await inst?.stop();
  await cluster?.stop();
});

describe('propagation', () => {
  it(`apply -> served, revoke -> 401, route edit -> new target on ${GATEWAYS} gateways, ${RUNS} runs each`, async () => {
    const urls = inst.gateways.map((g) => g.url);
    const applied: number[] = [];
    const revoked: number[] = [];
    // The same, counted from the moment kubectl returned (the API server had stored the change): the operator's share.
    const appliedAfterWrite: number[] = [];
    const revokedAfterWrite: number[] = [];
    const edited: number[] = [];
    const editedAfterWrite: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const name = `run-${i}`;
      const t0 = Date.now();
      await inst.kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: API, kind: 'ApiKey', metadata: { name }, spec: { accountRef: 'acme' } }));
      const w0 = Date.now();
      const key = await waitFor(`${name} key`, () => secretKey(cluster.api, inst.ns, `${name}-key`), HANG_MS, 10);
      const servedAt = await untilAll(urls, (u) => chat(u, key, { model: 'mock-mini' }).then((r) => r.status === 200), HANG_MS);
      applied.push(servedAt - t0);
      appliedAfterWrite.push(servedAt - w0);
      const t1 = Date.now();
      await inst.kubectlOk(['patch', 'apikey', name, '--type=merge', '-p', '{"spec":{"revoked":true}}']);
      const w1 = Date.now();
      const refusedAt = await untilAll(urls, (u) => chat(u, key, { model: 'mock-mini' }).then((r) => r.status === 401), HANG_MS);
      revoked.push(refusedAt - t1);
      revokedAfterWrite.push(refusedAt - w1);
      // The route moves to a target of a new name; the answer's x-svc-upstream names the one that served.
      const target = `mock-${i + 1}`;
      const t2 = Date.now();
      await inst.kubectlOk([
        'patch',
        'modelroute',
        'mock-mini',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { targets: [{ name: target, provider: 'mock' }] } }),
      ]);
      const w2 = Date.now();
      const movedAt = await untilAll(urls, (u) => upstreamOf(u, editor).then((t) => t === target), HANG_MS);
      edited.push(movedAt - t2);
      editedAfterWrite.push(movedAt - w2);
    }
    const a = summarize(applied);
    const r = summarize(revoked);
    const aw = summarize(appliedAfterWrite);
    const rw = summarize(revokedAfterWrite);
    const e = summarize(edited);
    const ew = summarize(editedAfterWrite);
    const goal = (s: { max: number }): string => (s.max < GOAL_MS ? `within the ${GOAL_MS} ms goal` : `above the ${GOAL_MS} ms goal`);
    process.stdout.write(
      [
        '',
        `Propagation over ${RUNS} runs, ${GATEWAYS} gateway processes (times include the kubectl process itself):`,
        `  kubectl apply ApiKey -> every gateway answers 200 with its generated key: p50 ${a.p50} ms, max ${a.max} ms`,
        `  kubectl patch revoked=true -> every gateway answers 401:                  p50 ${r.p50} ms, max ${r.max} ms`,
        `  kubectl patch ModelRoute targets -> every gateway calls the new target:   p50 ${e.p50} ms, max ${e.max} ms`,
        `  the same from the moment kubectl returned (stored by the API server), goal under ${GOAL_MS} ms:`,
        `    apply  p50 ${aw.p50} ms, max ${aw.max} ms (${goal(aw)})`,
        `    revoke p50 ${rw.p50} ms, max ${rw.max} ms (${goal(rw)})`,
        `    edit   p50 ${ew.p50} ms, max ${ew.max} ms (${goal(ew)})`,
        `  all apply runs:  ${applied.join(' ')}`,
        `  all revoke runs: ${revoked.join(' ')}`,
        `  all edit runs:   ${edited.join(' ')}`,
        `  load average: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
        '',
      ].join('\n'),
    );
    expect([applied, revoked, edited].map((runs) => runs.length)).toEqual([RUNS, RUNS, RUNS]);
  }, 600_000);
});

/** The target that served a call of the route's model (x-svc-upstream). */
async function upstreamOf(url: string, key: string): Promise<string | null> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 }),
  });
  await res.text();
  return res.headers.get('x-svc-upstream');
}
