// The work queue's contract: dedupe while waiting, one run at a time per key (an add while running runs it once
// more), retries with growing backoff, reset by success.
import { describe, expect, it } from 'vitest';
import { WorkQueue } from './work-queue.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('WorkQueue', () => {
  it('runs a key added many times while it waits once', async () => {
    const runs: string[] = [];
    const q = new WorkQueue(
      async (k) => void runs.push(k),
      () => {},
      { concurrency: 1 },
    );
    q.add('busy'); // starts at once
    for (let i = 0; i < 5; i++) q.add('a');
    q.add('b');
    await q.drained();
    expect(runs).toEqual(['busy', 'a', 'b']);
  });

  it('never runs one key twice at the same time, and reruns a key added while it ran', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const q = new WorkQueue(
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        runs++;
        await sleep(20);
        running--;
      },
      () => {},
      { concurrency: 4 },
    );
    q.add('k');
    await sleep(5);
    q.add('k');
    q.add('k');
    await q.drained();
    expect(maxRunning).toBe(1);
    expect(runs).toBe(2);
  });

  it('processes different keys concurrently up to the limit', async () => {
    let running = 0;
    let maxRunning = 0;
    const q = new WorkQueue(
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(20);
        running--;
      },
      () => {},
      { concurrency: 3 },
    );
    for (const k of ['a', 'b', 'c', 'd', 'e']) q.add(k);
    await q.drained();
    expect(maxRunning).toBe(3);
  });

  it('retries a failing key with doubling delays and forgets the failures after a success', async () => {
    const at: number[] = [];
    const delays: number[] = [];
    const q = new WorkQueue(
      async () => {
        at.push(Date.now());
        if (at.length < 4) throw new Error('not yet');
      },
      (_k, _e, retryInMs) => delays.push(retryInMs),
      { baseDelayMs: 20, maxDelayMs: 60 },
    );
    q.add('k');
    await until(() => at.length === 4);
    await q.drained();
    expect(at).toHaveLength(4);
    expect(delays).toEqual([20, 40, 60]);
    expect((at[3] as number) - (at[2] as number)).toBeGreaterThanOrEqual(55);
    // A later failure starts again from the base delay.
    let fail = true;
    const q2 = new WorkQueue(
      async () => {
        if (fail) {
          fail = false;
          throw new Error('once');
        }
      },
      (_k, _e, d) => delays.push(d),
      { baseDelayMs: 20 },
    );
    q2.add('k');
    await until(() => delays.length === 4);
    expect(delays.at(-1)).toBe(20);
  });

  it('requeues after the delay a handler asks for; the sooner of two delayed adds wins', async () => {
    const at: number[] = [];
    const start = Date.now();
    const q = new WorkQueue(
      async () => {
        at.push(Date.now() - start);
        return at.length === 1 ? { requeueAfterMs: 40 } : undefined;
      },
      () => {},
    );
    // The later add is a minute away, so only a hang (never a slow machine) makes the second run that late.
    q.addAfter('k', 60_000);
    q.add('k');
    await until(() => at.length === 2, 30_000);
    expect(at[1]).toBeLessThan(30_000);
    expect(at[1]).toBeGreaterThanOrEqual(35);
    await q.shutdown();
  });

  it('stops taking work on shutdown and waits for the run in flight', async () => {
    let finished = 0;
    const q = new WorkQueue(
      async () => {
        await sleep(30);
        finished++;
      },
      () => {},
      { concurrency: 1 },
    );
    q.add('a');
    q.add('b');
    await q.shutdown();
    expect(finished).toBe(1);
    q.add('c');
    await sleep(50);
    expect(finished).toBe(1);
  });

  it('runs a key added first ahead of every waiting key, once, and a running one again after its run', async () => {
    const runs: string[] = [];
    let release: () => void = () => {};
    const q = new WorkQueue(
      async (k) => {
        runs.push(k);
        if (k === 'busy') await new Promise<void>((r) => (release = r));
      },
      () => {},
      { concurrency: 1 },
    );
    q.add('busy'); // starts at once and holds the only slot
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    q.addFirst('c'); // waiting: moves up
    q.addFirst('x'); // new: ahead of the others, behind c
    q.add('x'); // already first: stays there, once
    q.addFirst('busy'); // running: once more after its run, at the back
    expect(q.depth).toBe(6);
    release();
    await until(() => runs.length === 7); // the second run of busy has begun
    release();
    await q.drained();
    expect(runs).toEqual(['busy', 'c', 'x', 'a', 'b', 'd', 'busy']);
  });
});
