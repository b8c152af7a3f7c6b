// Tool-call ids for Gemini answers. Gemini names a function call by its name and place, with an `id` only sometimes;
// clients need an id per call and send it back with the result. Ours: `call_g_<Gemini's id>` when Gemini gave a
// short one (letters, digits, _ and -), which the next request puts back on the call and its response; else
// `call_<nonce><index>`, which carries nothing. Every id stays within 40 characters of [A-Za-z0-9_-], which every
// client dialect and upstream accepts (OpenAI refuses longer tool-call ids), so a conversation begun on a Gemini
// target can fall back to any other. Gemini 3's thought signatures are therefore not carried (they run to hundreds
// of bytes): gemini-request.ts sends Google's documented placeholder in their place.

/** Gemini ids longer than this do not fit in 40 characters with the prefix: such a call gets one of ours. */
const MAX_CARRIED = 33;

/** The nonce part of the ids of one answer: the start of its responseId (letters and digits) or the time. */
export function callNonce(responseId: unknown): string {
  const tail = typeof responseId === 'string' ? responseId.replace(/[^A-Za-z0-9]/g, '').slice(0, 24) : '';
  return tail || Date.now().toString(36);
}

export function encodeCallId(nonce: string, index: number, geminiId?: unknown): string {
  if (typeof geminiId === 'string' && geminiId.length <= MAX_CARRIED && /^[A-Za-z0-9_-]+$/.test(geminiId)) return `call_g_${geminiId}`;
  return `call_${nonce}${index}`;
}

/** Gemini's id of the call an id of ours names, if it carries one. */
export function geminiIdOf(callId: string): string | undefined {
  return /^call_g_([A-Za-z0-9_-]+)$/.exec(callId)?.[1];
}
