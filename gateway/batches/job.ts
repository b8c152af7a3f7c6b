// The job that runs batches: submits new ones upstream, polls running ones, and once one ended charges its lines,
// writes its output and error files and releases the rest of its hold. Every gateway process runs it (standalone and
// cluster alike); a batch is worked on by one process at a time (BatchRecords.claim), and each step is idempotent, so
// a process that dies mid-step leaves the batch to the next one, which charges nothing twice.
import { randomUUID } from 'node:crypto';
import { entryOf, type CompiledTarget } from '../contract/snapshot.ts';
import type { CallLog } from '../pipeline/context.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import { AnthropicBatchUpstream } from './anthropic-upstream.ts';
import { messageResults } from './message-shapes.ts';
import { MessagesOverOpenAI } from './messages-over-openai.ts';
import { MockBatchUpstream } from './mock-upstream.ts';
import { OpenAIBatchUpstream } from './openai-upstream.ts';
import { outputTexts } from './output-files.ts';
import type { OpenBatch } from './records.ts';
import type { BatchDeps } from './service.ts';
import { chargeLines, settleBatch } from './settle.ts';
import { upstreamLines, type BatchUpstream, type PollResult } from './upstream.ts';
import type { BatchRecord, FileRecord, LineResult } from './types.ts';

/** Submissions tried before a batch is failed (its hold released, nothing charged). */
const SUBMIT_TRIES = 3;

export interface JobDeps extends BatchDeps {
  providers: ProviderRegistry;
  log: CallLog;
  /** Other batch APIs by provider kind (the Anthropic one: anthropic-upstream.ts). */
  upstreams?: Partial<Record<CompiledTarget['provider'], BatchUpstream>>;
}

export class BatchJob {
  private readonly d: JobDeps;
  private readonly owner = randomUUID();
  private readonly openai = new OpenAIBatchUpstream();
  private readonly anthropic = new AnthropicBatchUpstream();
  private mock: MockBatchUpstream | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly claimed = new Map<string, OpenBatch>();

  constructor(d: JobDeps) {
    this.d = d;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.d.settings.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
    // Given back, so another process takes these batches at its next poll rather than when the claims run out.
    for (const ref of this.claimed.values()) await this.d.records.unclaim(ref, this.owner).catch(() => {});
    this.claimed.clear();
  }

  /** A claim outlives a few polls (renewed at each), so a process that died leaves its batches soon. */
  private claimMs(): number {
    return Math.max(30_000, 3 * this.d.settings.pollMs);
  }

  /** One pass over the open batches (one at a time in a process; a pass already running is joined). */
  tick(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    let open: OpenBatch[];
    try {
      open = await this.d.records.open();
    } catch (err) {
      this.d.log.warn({ err }, 'Could not list the open batches; trying again at the next poll');
      return;
    }
    for (const ref of open) {
      try {
        if (!(await this.d.records.claim(ref, this.owner, this.claimMs()))) continue;
        this.claimed.set(`${ref.account}|${ref.id}`, ref);
        await this.step(ref);
      } catch (err) {
        this.d.log.warn({ err, batch: ref.id }, 'A batch step failed; trying again at the next poll');
      }
    }
  }

  private upstream(t: CompiledTarget, b: BatchRecord): BatchUpstream | null {
    const given = this.d.upstreams?.[t.provider];
    if (given) return given;
    let up: BatchUpstream | null = null;
    if (t.provider === 'mock') up = this.mock ??= new MockBatchUpstream(this.d.providers.get('mock'), this.d.now);
    if (t.provider === 'openai' || t.provider === 'azure-openai') up = this.openai;
    if (t.provider === 'anthropic') return b.endpoint === '/v1/messages' ? this.anthropic : null;
    // A Message Batch on an OpenAI-protocol batch API: its lines translated there and back.
    return up && b.endpoint === '/v1/messages' ? new MessagesOverOpenAI(up) : up;
  }

  private async step(ref: OpenBatch): Promise<void> {
    const b = await this.d.records.batch(ref.account, ref.id);
    if (!b || b.settled) return;
    const now = this.d.now();
    // Past its window a batch never submitted expires here; one submitted is cancelled upstream (which ends it with
    // what ran) and, if it has still not ended when half the hold's grace is gone, expires here too: every line not
    // answered by then is released, so no result is ever charged after its hold ran out.
    if ((now >= b.expiresAt && b.upstreamId === null) || now >= b.expiresAt + this.d.settings.holdGraceMs / 2)
      return this.finish(b, { state: 'ended', status: 'expired', results: [], errors: [] });
    const target = entryOf(this.d.config.current().models, b.model)?.targets.find((t) => t.name === b.target);
    const up = target ? this.upstream(target, b) : null;
    if (!target || !up) {
      // The route or its target is gone: a batch never submitted ends here; one running waits for its route.
      if (b.upstreamId === null) return this.finish(b, { state: 'ended', status: 'failed', results: [], errors: [GONE] });
      this.d.log.warn({ batch: b.id, target: b.target }, 'The target of a running batch is no longer configured');
      return;
    }
    const input = (): Promise<string | null> => this.input(b);
    if (now >= b.expiresAt && !b.cancelSent) {
      await up.cancel(b, target);
      b.cancelSent = true;
      await this.d.records.putBatch(b);
    }
    if (b.upstreamId === null) {
      if (b.status === 'cancelling') return this.finish(b, { state: 'ended', status: 'cancelled', results: [], errors: [] });
      return this.submit(b, target, up);
    }
    if (b.status === 'cancelling' && !b.cancelSent) {
      await up.cancel(b, target);
      b.cancelSent = true;
      await this.d.records.putBatch(b);
    }
    const r = await up.poll(b, target, input);
    if (r.state === 'ended' && now >= b.expiresAt && r.status === 'cancelled') return this.finish(b, { ...r, status: 'expired' });
    if (r.state === 'running') {
      // A cancel asked here stays `cancelling` until the upstream says it ended.
      if (b.status !== 'cancelling' && b.status !== r.status) {
        b.status = r.status;
        await this.d.records.putBatch(b);
      }
      return;
    }
    return this.finish(b, r);
  }

  private async input(b: BatchRecord): Promise<string | null> {
    if (b.inputFileId === null) return null;
    const c = await this.d.records.content(b.account, b.inputFileId, this.d.now());
    return c ? c.toString('utf8') : null;
  }

  private async submit(b: BatchRecord, target: CompiledTarget, up: BatchUpstream): Promise<void> {
    const text = await this.input(b);
    if (text === null) return this.finish(b, { state: 'ended', status: 'failed', results: [], errors: [NO_INPUT] });
    try {
      b.upstreamId = await up.submit(b, target, upstreamLines(text, target.upstreamModel));
      b.status = 'in_progress';
      b.inProgressAt = this.d.now();
      b.failures = 0;
      await this.d.records.putBatch(b);
    } catch (err) {
      b.failures += 1;
      this.d.log.warn({ err, batch: b.id, target: target.name }, 'Submitting a batch upstream failed');
      if (b.failures >= SUBMIT_TRIES) return this.finish(b, { state: 'ended', status: 'failed', results: [], errors: [REFUSED] });
      await this.d.records.putBatch(b);
    }
  }

  /** Charges the lines, writes the output and error files, releases the rest of the hold: the batch is done. */
  private async finish(b: BatchRecord, r: PollResult & { state: 'ended' }): Promise<void> {
    const now = this.d.now();
    // Lines with no result in an expired or cancelled batch did not run: expired or cancelled lines (they pay nothing).
    const results: LineResult[] =
      r.status === 'expired' ? withUnrun(b, r.results, EXPIRED) : r.status === 'cancelled' ? withUnrun(b, r.results, CANCELLED) : r.results;
    const charged = chargeLines(b, results);
    if (!this.d.store.parts) throw new Error('the store does not settle batches');
    await settleBatch(this.d.store.parts, b, charged, now);
    const keep = (purpose: FileRecord['purpose'], text: string): Promise<string | null> => this.keepFile(b, purpose, text, now);
    if (b.dialect === 'anthropic') {
      const m = messageResults(b.model, charged);
      b.outputFileId = await keep('message_batch_results', m.text);
      b.resultCounts = m.counts;
      b.counts = { total: b.lines.length, completed: m.counts.succeeded, failed: b.lines.length - m.counts.succeeded };
    } else {
      const texts = outputTexts(b.id, b.model, charged);
      b.outputFileId = await keep('batch_output', texts.output);
      b.errorFileId = await keep('batch_error', texts.error);
      b.counts = { total: b.lines.length, completed: texts.completed, failed: texts.failed };
    }
    b.status = r.status;
    b.endedAt = now;
    b.errors = r.errors;
    b.settled = true;
    await this.d.records.putBatch(b);
  }

  /** A result file, named after its batch (written again, the same, if the step runs twice); none when empty. */
  private async keepFile(b: BatchRecord, purpose: FileRecord['purpose'], text: string, now: number): Promise<string | null> {
    if (text === '') return null;
    const id = `file-${purpose === 'batch_error' ? 'err' : 'out'}-${b.id.replace(/^[a-z]+_/, '')}`;
    const content = Buffer.from(text, 'utf8');
    const s = Math.floor(now / 1000);
    await this.d.records.putFile(
      {
        id,
        account: b.account,
        purpose,
        filename: `${b.id}_${purpose === 'batch_error' ? 'error' : purpose === 'batch_output' ? 'output' : 'results'}.jsonl`,
        bytes: content.length,
        createdAt: s,
        expiresAt: s + this.d.settings.fileRetentionSec,
      },
      content,
    );
    return id;
  }
}

const EXPIRED = { code: 'batch_expired', message: 'The batch expired before this request ran.' };
const CANCELLED = { code: 'batch_cancelled', message: 'The batch was cancelled before this request ran.' };

/**
 * The results of an expired (cancelled) batch: every line that did not run is an expired (cancelled) line. An
 * expired batch's lines the upstream reports cancelled were cancelled for its expiry: expired too.
 */
function withUnrun(b: BatchRecord, given: readonly LineResult[], why: { code: string; message: string }): LineResult[] {
  const results = why === EXPIRED ? given.filter((r) => r.status !== 0) : [...given];
  const have = new Set(results.map((r) => r.customId));
  const rest = b.lines
    .filter((l) => !have.has(l.customId))
    .map((l): LineResult => ({ customId: l.customId, status: 0, body: null, inputTokens: 0, outputTokens: 0, error: why }));
  return [...results, ...rest];
}

const GONE = { code: 'route_removed', message: 'The model route of this batch was removed before it ran.' };
const NO_INPUT = { code: 'input_file_deleted', message: 'The input file was deleted before the batch ran.' };
const REFUSED = { code: 'upstream_error', message: 'The upstream did not take the batch.' };
