// An answer's id and finish reasons (gen_ai.response.id, gen_ai.response.finish_reasons) for the trace. The
// translators note them from the events they parse anyway (Facts); a pass-through's whole answer, which nothing
// parses, is read by scanning for the two keys (scanFacts), and only when the call is traced.
import { depthAt } from './json-splice.ts';
import type { AnswerFacts } from './types.ts';

/** What a stream translator noted so far: set from values it already has in hand, allocated only when used. */
export class Facts {
  id: string | null = null;
  private reasons: string[] | null = null;

  /** The upstream's id, when it is a string (first one wins: every chunk of an OpenAI stream repeats it). */
  noteId(id: unknown): void {
    if (this.id === null && typeof id === 'string' && id !== '') this.id = id;
  }

  /** The finish reason of choice `index` (0 for protocols with one answer). */
  noteReason(reason: unknown, index = 0): void {
    if (typeof reason !== 'string' || reason === '') return;
    this.reasons ??= [];
    this.reasons[index < 0 || index > 127 ? this.reasons.length : index] = reason;
  }

  facts(): AnswerFacts {
    return { id: this.id, finishReasons: this.reasons ? this.reasons.filter((r) => typeof r === 'string') : [] };
  }
}

/** The string value that follows `at` (a key's colon), or null (not a plain string). */
function stringAfter(json: string, at: number): string | null {
  let i = at;
  while (json.charCodeAt(i) === 32) i++;
  if (json.charCodeAt(i) !== 34) return null;
  const end = json.indexOf('"', i + 1);
  if (end === -1) return null;
  const v = json.slice(i + 1, end);
  return v.includes('\\') ? null : v;
}

/**
 * The top-level "id" and every `reasonKey` value ("finish_reason" of each OpenAI choice, Anthropic's top-level
 * "stop_reason") of a serialized answer, without parsing it: a quoted key cannot occur unescaped inside a string.
 */
export function scanFacts(json: string, reasonKey: 'finish_reason' | 'stop_reason'): AnswerFacts {
  let id: string | null = null;
  for (let at = json.indexOf('"id":'); at !== -1 && id === null; at = json.indexOf('"id":', at + 5)) {
    if (depthAt(json, at) === 1) id = stringAfter(json, at + 5);
  }
  const key = `"${reasonKey}":`;
  const finishReasons: string[] = [];
  for (let at = json.indexOf(key); at !== -1; at = json.indexOf(key, at + key.length)) {
    const r = stringAfter(json, at + key.length);
    if (r) finishReasons.push(r);
  }
  return { id, finishReasons };
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** Facts of a parsed Anthropic message. */
export function messageFacts(message: Record<string, unknown>): AnswerFacts {
  const reason = str(message.stop_reason);
  return { id: str(message.id), finishReasons: reason ? [reason] : [] };
}

/** Facts of a parsed Chat Completions answer: one finish reason per choice. */
export function completionFacts(completion: Record<string, unknown>): AnswerFacts {
  const choices = Array.isArray(completion.choices) ? completion.choices : [];
  const finishReasons = choices.map((c) => str((c as { finish_reason?: unknown } | null)?.finish_reason)).filter((r): r is string => r !== null);
  return { id: str(completion.id), finishReasons };
}

/** Facts of a parsed Responses object: the incomplete reason when incomplete, else its status (completed, failed). */
export function responseFacts(response: Record<string, unknown>): AnswerFacts {
  const details = response.incomplete_details as { reason?: unknown } | null | undefined;
  const reason = str(response.status) === 'incomplete' ? (str(details?.reason) ?? 'incomplete') : str(response.status);
  return { id: str(response.id), finishReasons: reason ? [reason] : [] };
}
