// Anthropic's Message Batches for one gateway process: a batch's requests checked (each a Messages request on one
// model the key may use, on a route that batches), their worst case held in one store step, kept as the batch's input
// file and run by the job (job.ts) like every other batch; read back, cancelled, its results read, deleted once ended. Per
// account: another account's batch id is not found. No HTTP here: gateway/http/message-batch-routes.ts calls these.
import { GatewayError } from '../errors/catalog.ts';
import type { Principal } from '../pipeline/resolve.ts';
import { messageLines, readMessageRequests } from './message-requests.ts';
import { checkTranslatable } from './messages-over-openai.ts';
import { batchPrice, lineOf, planBatch } from './plan.ts';
import { admitBatch, cancelBatch, newId, type BatchDeps } from './service.ts';
import type { BatchRecord } from './types.ts';

/** Checks every request, holds the batch's worst case (402 when it does not fit), keeps the batch; nothing on a refusal. */
export async function createMessageBatch(d: BatchDeps, p: Principal, body: unknown): Promise<BatchRecord> {
  const input = readMessageRequests(body);
  const { model, target } = planBatch(d.config.current(), p, input.model, '/v1/messages');
  const id = newId('msgbatch_');
  if (target.provider !== 'anthropic')
    checkTranslatable(
      input.requests.map((r) => r.params),
      target.upstreamModel,
    );
  const lines = input.requests.map((r) => lineOf(model, r.customId, r.demand));
  const content = Buffer.from(messageLines(input.requests), 'utf8');
  const now = d.now();
  const s = Math.floor(now / 1000);
  const fileId = inputFileId(id);
  // The requests first, so the job never finds the batch without them; removed again when the hold is refused.
  await d.records.putFile(
    {
      id: fileId,
      account: p.account.name,
      purpose: 'message_batch',
      filename: `${id}_requests.jsonl`,
      bytes: content.length,
      createdAt: s,
      // Kept while the batch may run (its window and the hold's grace), and at least the files' retention.
      expiresAt: s + Math.max(d.settings.fileRetentionSec, Math.ceil((d.settings.windowMs + d.settings.holdGraceMs) / 1000)),
      model: model.id,
    },
    content,
  );
  try {
    return await admitBatch(d, p, {
      id,
      dialect: 'anthropic',
      endpoint: '/v1/messages',
      inputFileId: fileId,
      completionWindow: '24h',
      metadata: null,
      model: model.id,
      price: batchPrice(model),
      target: target.name,
      lines,
    });
  } catch (err) {
    await d.records.deleteFile(p.account.name, fileId);
    throw err;
  }
}

function inputFileId(batchId: string): string {
  return `file-msgreq-${batchId.replace(/^msgbatch_/, '')}`;
}

/** The caller's Message Batch (not deleted), or 404: another account's id, or an OpenAI batch's, is not found. */
export async function messageBatchOf(d: BatchDeps, p: Principal, id: string): Promise<BatchRecord> {
  const b = await d.records.batch(p.account.name, id);
  if (!b || b.dialect !== 'anthropic' || b.deletedAt !== undefined)
    throw new GatewayError('not_found', `No such message batch: ${JSON.stringify(id)}.`, { param: 'message_batch_id' });
  return b;
}

export async function cancelMessageBatch(d: BatchDeps, p: Principal, id: string): Promise<BatchRecord> {
  await messageBatchOf(d, p, id);
  return cancelBatch(d, p, id, 'anthropic');
}

/** The results file of an ended batch (a 400 while it runs, as Anthropic answers). */
export async function messageBatchResults(d: BatchDeps, p: Principal, id: string): Promise<Buffer> {
  const b = await messageBatchOf(d, p, id);
  if (!b.settled)
    throw new GatewayError('invalid_request', `The message batch ${id} has not ended yet; its results are ready once processing_status is ended.`);
  if (b.outputFileId === null) return Buffer.alloc(0);
  const c = await d.records.content(b.account, b.outputFileId, d.now());
  if (!c) throw new GatewayError('not_found', `The results of message batch ${id} are no longer kept.`);
  return c;
}

/** Newest first, filtered to the caller's Message Batches not deleted. */
export async function messageBatches(d: BatchDeps, p: Principal): Promise<BatchRecord[]> {
  const all = await d.records.batches(p.account.name, { limit: Number.MAX_SAFE_INTEGER });
  return all.filter((b) => b.dialect === 'anthropic' && b.deletedAt === undefined);
}

/** Deletes an ended batch and its files; one still running must be cancelled first (Anthropic's rule). */
export async function deleteMessageBatch(d: BatchDeps, p: Principal, id: string): Promise<void> {
  const b = await messageBatchOf(d, p, id);
  if (!b.settled)
    throw new GatewayError('invalid_request', `The message batch ${id} is still processing; cancel it and delete it once it has ended.`, {
      param: 'message_batch_id',
    });
  for (const f of [b.inputFileId, b.outputFileId, b.errorFileId]) if (f !== null) await d.records.deleteFile(b.account, f);
  await d.records.putBatch({ ...b, deletedAt: d.now() });
}
