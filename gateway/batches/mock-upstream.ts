// The built-in mock's batch API: a batch is done a few seconds after submission (target mock.latencyMs, at least
// 2 s), each line answered by the mock provider as a call would be. Stateless: the answers are worked out from the
// input lines when the batch is polled, so a restart changes nothing.
import type { CompiledTarget } from '../contract/snapshot.ts';
import type { Provider } from '../providers/types.ts';
import { reportedTokens, type BatchUpstream, type PollResult } from './upstream.ts';
import type { BatchRecord, LineResult } from './types.ts';

const MIN_RUN_MS = 2000;

export class MockBatchUpstream implements BatchUpstream {
  private readonly mock: Provider;
  private readonly now: () => number;

  constructor(mock: Provider, now: () => number = Date.now) {
    this.mock = mock;
    this.now = now;
  }

  async submit(b: BatchRecord): Promise<string> {
    return `mock_${b.id}`;
  }

  async poll(b: BatchRecord, target: CompiledTarget, input: () => Promise<string | null>): Promise<PollResult> {
    const runMs = Math.max(MIN_RUN_MS, target.mock?.latencyMs ?? 0);
    const cancelled = b.status === 'cancelling';
    if (!cancelled && this.now() < (b.inProgressAt ?? b.createdAt) + runMs) return { state: 'running', status: 'in_progress' };
    const text = await input();
    const results: LineResult[] = [];
    for (const raw of (text ?? '').split('\n')) {
      if (raw.trim() === '') continue;
      const line = JSON.parse(raw) as { custom_id: string; url: string; body: Record<string, unknown> };
      if (cancelled) {
        results.push({
          customId: line.custom_id,
          status: 0,
          body: null,
          inputTokens: 0,
          outputTokens: 0,
          error: { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' },
        });
        continue;
      }
      results.push(await this.run(line, target));
    }
    return { state: 'ended', status: cancelled ? 'cancelled' : 'completed', results, errors: [] };
  }

  private async run(line: { custom_id: string; url: string; body: Record<string, unknown> }, target: CompiledTarget): Promise<LineResult> {
    const operation = line.url === '/v1/embeddings' ? 'embeddings' : 'chat';
    const out = await this.mock.send({
      target: { ...target, mock: { latencyMs: 0, chunkDelayMs: 0 } },
      operation,
      body: JSON.stringify(line.body),
      stream: false,
      headers: {},
      signal: AbortSignal.timeout(10_000),
    });
    const text = out.kind === 'stream' ? '' : out.body;
    const body = JSON.parse(text) as unknown;
    const t = out.status < 300 ? reportedTokens(body) : { input: 0, output: 0 };
    return { customId: line.custom_id, status: out.status, body, inputTokens: t.input, outputTokens: t.output };
  }

  async cancel(): Promise<void> {}
}
