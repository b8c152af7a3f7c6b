// Image models are not probed: the smallest probe would make, and pay for, an image. The monitor probes a chat route
// and leaves the image route beside it alone (the fake upstream records every request it gets).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBoard } from '../../gateway/availability/board.ts';
import { MemoryHistory } from '../../gateway/availability/history.ts';
import { Monitor } from '../../gateway/availability/monitor.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { ProviderRegistry } from '../../gateway/providers/registry.ts';
import { startImagesUpstream, type ImagesUpstream } from '../fakes/images-upstream.ts';
import { TEST_PEPPER } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

let up: ImagesUpstream;
let providers: ProviderRegistry;
let monitor: Monitor | null = null;

beforeAll(async () => {
  up = await startImagesUpstream();
  providers = new ProviderRegistry();
});

afterAll(async () => {
  await monitor?.stop();
  await providers?.close();
  await up?.close();
});

describe('availability probes of image models', () => {
  it('probes the chat model and never the image model', async () => {
    const target = (name: string, upstreamModel: string) => [{ name, provider: 'openai' as const, baseUrl: `${up.url}/v1`, upstreamModel }];
    const docs = [
      ...basics().docs,
      route('chat', target('chat-a', 'gpt-4o'), { probe: { intervalSeconds: 5 } }),
      route('pictures', target('img-a', 'gpt-image-1'), {
        type: 'image',
        probe: { intervalSeconds: 5 },
        pricing: { inputPerMTokUsd: 5, outputPerMTokUsd: 40 },
      }),
    ];
    const parsed = parseManifests(docs.map((doc, i) => ({ source: `test#${i}`, doc })));
    if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
    const { snapshot, problems } = compile(parsed.set, { pepper: TEST_PEPPER });
    expect(problems).toEqual([]);
    let now = Date.UTC(2026, 10, 27, 6, 0, 0);
    monitor = new Monitor({ snapshot: () => snapshot, providers, board: new MemoryBoard(), history: new MemoryHistory(), now: () => now }).start();
    await until(() => up.calls.some((c) => c.path === '/v1/chat/completions'), 30_000, 'the chat model probed');
    // Two more intervals: the chat model again, the image model never.
    now += 10_000;
    await until(() => up.calls.filter((c) => c.path === '/v1/chat/completions').length >= 2, 30_000, 'the chat model probed again');
    expect(up.calls.filter((c) => c.body.model === 'gpt-image-1' || c.path.includes('/images/'))).toEqual([]);
  });
});
