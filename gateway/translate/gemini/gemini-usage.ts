// Gemini usageMetadata <-> ours, and Google's error bodies. promptTokenCount already includes the cached tokens
// (cachedContentTokenCount), as ours does; the tokens of tool-use prompts (toolUsePromptTokenCount) are input too.
// candidatesTokenCount excludes the thinking tokens (thoughtsTokenCount), which are billed as output: added.
// Google leaves zero counts out of its JSON, so an absent candidatesTokenCount is read from totalTokenCount when
// that is reported (the answer had no output, e.g. a blocked prompt); a count that is there but not a whole
// non-negative number is flagged missing, never read as 0.
import { reasoning } from '../openai/openai-usage.ts';
import { safeJson, tokenCount, type Usage } from '../types.ts';

export interface GeminiUsage {
  promptTokenCount?: unknown;
  candidatesTokenCount?: unknown;
  cachedContentTokenCount?: unknown;
  thoughtsTokenCount?: unknown;
  toolUsePromptTokenCount?: unknown;
  totalTokenCount?: unknown;
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export function fromGeminiUsage(u: GeminiUsage | null | undefined): Usage {
  const prompt = tokenCount(u?.promptTokenCount);
  const toolUse = num(u?.toolUsePromptTokenCount);
  const thoughts = num(u?.thoughtsTokenCount);
  let candidates = tokenCount(u?.candidatesTokenCount);
  const total = tokenCount(u?.totalTokenCount);
  if (u && u.candidatesTokenCount === undefined && total !== null && prompt !== null) candidates = Math.max(0, total - prompt - toolUse - thoughts);
  const out: Usage = {
    inputTokens: (prompt ?? 0) + toolUse,
    outputTokens: (candidates ?? 0) + thoughts,
    cacheReadTokens: Math.min(num(u?.cachedContentTokenCount), prompt ?? 0),
    cacheWriteTokens: 0,
    ...reasoning(thoughts),
  };
  if (prompt === null) out.inputMissing = true;
  if (candidates === null) out.outputMissing = true;
  return out;
}

/** The message of Google's error JSON (`{"error":{"code","message","status"}}`, or a list of them). */
export function geminiErrorMessage(body: string, status: number): string {
  let v = safeJson(body);
  if (Array.isArray(v)) v = v[0];
  const e = (v as { error?: { message?: unknown; status?: unknown } } | undefined)?.error;
  if (typeof e?.message === 'string') {
    const name = typeof e.status === 'string' && /^[A-Z_]+$/.test(e.status) ? ` ${e.status}` : '';
    return `upstream answered ${status}${name}: ${e.message.slice(0, 500)}`;
  }
  return `upstream answered ${status}`;
}
