// Tool-call ids for Gemini answers. Gemini names a function call by its name and place (an `id` only sometimes), and
// Gemini 3 signs its calls (`thoughtSignature` on the part) and refuses a later turn whose calls lost their signature.
// Clients keep nothing but the call id, so the id carries both: `call_<nonce>` when there is nothing to carry, else
// `call_<nonce>_<base64url of {"id","s"}>`, which a later request decodes to put the id and signature back. Only
// [A-Za-z0-9_-] is used, which every client dialect accepts for a call id.
import { isObject } from './json-read.ts';
import { safeJson } from './types.ts';

export interface CallRef {
  /** Gemini's own id of the call, when it gave one. */
  id?: string;
  /** The part's thoughtSignature. */
  signature?: string;
}

/** The nonce part of the ids of one answer: its responseId (letters and digits only) or the time. */
export function callNonce(responseId: unknown): string {
  const tail = typeof responseId === 'string' ? responseId.replace(/[^A-Za-z0-9]/g, '') : '';
  return tail || Date.now().toString(36);
}

export function encodeCallId(nonce: string, index: number, ref: CallRef): string {
  const head = `call_${nonce}${index}`;
  const carried: Record<string, string> = {};
  if (ref.id) carried.id = ref.id;
  if (ref.signature) carried.s = ref.signature;
  if (Object.keys(carried).length === 0) return head;
  return `${head}_${Buffer.from(JSON.stringify(carried)).toString('base64url')}`;
}

/** What an id of ours carries; any other id carries nothing. */
export function decodeCallId(callId: string): CallRef {
  const m = /^call_[A-Za-z0-9]+_([A-Za-z0-9_-]+)$/.exec(callId);
  if (!m) return {};
  const v = safeJson(Buffer.from(m[1]!, 'base64url').toString('utf8'));
  if (!isObject(v)) return {};
  const out: CallRef = {};
  if (typeof v.id === 'string') out.id = v.id;
  if (typeof v.s === 'string') out.signature = v.s;
  return out;
}
