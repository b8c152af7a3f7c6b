// Files and batches for one gateway process: uploads checked and kept per account, batches created with their
// worst case held, cancelled, and run by the job (job.ts). No HTTP here: the routes (gateway/http/batch-routes.ts,
// files-routes.ts) call these with the caller's principal.
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors/catalog.ts';
import type { ConfigSource } from '../pipeline/context.ts';
import type { Principal } from '../pipeline/resolve.ts';
import type { Store } from '../state/store.ts';
import { newEventId } from '../usage/event.ts';
import { readInputFile } from './input-lines.ts';
import { batchHold, batchPrice, lineOf, planBatch } from './plan.ts';
import type { BatchRecords } from './records.ts';
import type { BatchSettings } from './settings.ts';
import type { BatchEndpoint, BatchRecord, FileRecord } from './types.ts';

export interface BatchDeps {
  config: ConfigSource;
  store: Store;
  records: BatchRecords;
  settings: BatchSettings;
  now: () => number;
}

/** `file-…` and `batch_…` as OpenAI names them: 24 random bytes, base64url. */
export function newId(prefix: 'file-' | 'batch_' | 'msgbatch_'): string {
  return `${prefix}${randomBytes(18).toString('base64url')}`;
}

/** A batch input file: every line checked (the model one the key may use, on a route that batches) before it is kept. */
export async function uploadFile(d: BatchDeps, p: Principal, filename: string, content: Buffer): Promise<FileRecord> {
  const input = readInputFile(content.toString('utf8'));
  planBatch(d.config.current(), p, input.model, input.url);
  const now = d.now();
  const f: FileRecord = {
    id: newId('file-'),
    account: p.account.name,
    purpose: 'batch',
    filename,
    bytes: content.length,
    createdAt: Math.floor(now / 1000),
    expiresAt: Math.floor(now / 1000) + d.settings.fileRetentionSec,
    model: input.model,
  };
  await d.records.putFile(f, content);
  return f;
}

export interface CreateBatch {
  inputFileId: string;
  endpoint: BatchEndpoint;
  completionWindow: string;
  metadata: Record<string, string> | null;
}

/**
 * A batch on an uploaded file: its lines read again (the model's access and route checked now, not at upload), the
 * sum of their holds admitted in one store step against the key's budget and the account's balance, then kept for
 * the job to submit. A refusal (402 when it does not fit) keeps nothing.
 */
export async function createBatch(d: BatchDeps, p: Principal, req: CreateBatch): Promise<BatchRecord> {
  const file = await d.records.file(p.account.name, req.inputFileId, d.now());
  const content = file ? await d.records.content(p.account.name, req.inputFileId, d.now()) : null;
  if (!file || !content) throw new GatewayError('not_found', `No such file: ${JSON.stringify(req.inputFileId)}.`, { param: 'input_file_id' });
  if (file.purpose !== 'batch')
    throw new GatewayError('invalid_request', `The file ${file.id} is not a batch input file (its purpose is ${file.purpose}).`, { param: 'input_file_id' });
  const input = readInputFile(content.toString('utf8'));
  if (input.url !== req.endpoint)
    throw new GatewayError('invalid_request', `The file's requests call ${input.url}, not the batch's endpoint ${req.endpoint}.`, { param: 'endpoint' });
  const { model, target } = planBatch(d.config.current(), p, input.model, req.endpoint);
  const lines = input.lines.map((l) => lineOf(model, l.customId, l.demand));
  return admitBatch(d, p, {
    id: newId('batch_'),
    dialect: 'openai',
    endpoint: req.endpoint,
    inputFileId: file.id,
    completionWindow: req.completionWindow,
    metadata: req.metadata,
    model: model.id,
    price: batchPrice(model),
    target: target.name,
    lines,
  });
}

export type NewBatch = Pick<
  BatchRecord,
  'id' | 'dialect' | 'endpoint' | 'inputFileId' | 'completionWindow' | 'metadata' | 'model' | 'price' | 'target' | 'lines'
>;

/** Holds the batch's worst case (one atomic store step) and keeps the batch; the 402 or 429 of a refusal otherwise. */
export async function admitBatch(d: BatchDeps, p: Principal, n: NewBatch): Promise<BatchRecord> {
  if (!d.store.parts) throw new GatewayError('internal_error', "This gateway's store does not run batches.");
  const now = d.now();
  const holdNano = batchHold(n.lines);
  const decision = await d.store.admit({
    eventId: newEventId(),
    key: p.key,
    account: p.account,
    // A batch takes one request of the key's RPM and none of its TPM: its lines run upstream, over a day.
    tokens: 0,
    holdNano,
    now,
    holdTtlMs: d.settings.windowMs + d.settings.holdGraceMs,
  });
  if (!decision.ok)
    throw new GatewayError(decision.code, `Batch of ${n.lines.length} requests: ${decision.message}`, { retryAfterSec: decision.retryAfterSec });
  const b: BatchRecord = {
    ...n,
    account: p.account.name,
    apiKey: p.key.name,
    status: 'validating',
    upstreamId: null,
    createdAt: now,
    inProgressAt: null,
    endedAt: null,
    cancellingAt: null,
    expiresAt: now + d.settings.windowMs,
    hold: decision.hold,
    counts: { total: n.lines.length, completed: 0, failed: 0 },
    outputFileId: null,
    errorFileId: null,
    settled: false,
    failures: 0,
    cancelSent: false,
    errors: [],
  };
  await d.records.putBatch(b);
  return b;
}

/** Found in the caller's account only, in its API's dialect: another account's id (or a Message Batch's on
 * /v1/batches) is not found. */
export async function batchOf(d: BatchDeps, p: Principal, id: string, dialect: BatchRecord['dialect'] = 'openai'): Promise<BatchRecord> {
  const b = await d.records.batch(p.account.name, id);
  if (!b || b.dialect !== dialect) throw new GatewayError('not_found', `No such batch: ${JSON.stringify(id)}.`, { param: 'batch_id' });
  return b;
}

/** Asks for the batch to stop: the job cancels it upstream and charges what ran. */
export async function cancelBatch(d: BatchDeps, p: Principal, id: string, dialect: BatchRecord['dialect'] = 'openai'): Promise<BatchRecord> {
  const b = await batchOf(d, p, id, dialect);
  if (b.status === 'validating' || b.status === 'in_progress' || b.status === 'finalizing') {
    b.status = 'cancelling';
    b.cancellingAt = d.now();
    await d.records.putBatch(b);
  }
  return b;
}
