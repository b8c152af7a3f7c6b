// Edits and reads of a serialized JSON answer that leave it as the upstream sent it: the pass-throughs set the
// top-level model and read the top-level usage without parsing and re-serializing the whole body (which for a long
// answer was the largest cost of passing it on). Unusual layouts fall back to a full parse, so results are always
// those of a parser.
import { safeJson } from './types.ts';

const MODEL_KEY = '"model":"';

/** Depth of `at` in `json` (1 = directly inside the outermost object), strings skipped. */
export function depthAt(json: string, at: number): number {
  let depth = 0;
  for (let i = 0; i < at; i++) {
    const c = json.charCodeAt(i);
    if (c === 34) {
      for (i++; i < at && json.charCodeAt(i) !== 34; i++) if (json.charCodeAt(i) === 92) i++;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) depth--;
  }
  return depth;
}

/**
 * Sets the top-level model of a serialized object (left alone when it has none). Runs on every chunk of a stream,
 * so the usual compact form near the start is found with indexOf and left as it is when it already names the model.
 */
export function rewriteModel(json: string, model: string): string {
  const at = json.indexOf(MODEL_KEY);
  if (at > 0 && depthAt(json, at) === 1) {
    const from = at + MODEL_KEY.length;
    const end = json.indexOf('"', from);
    let plain = end !== -1;
    for (let i = from; plain && i < end; i++) if (json.charCodeAt(i) === 92) plain = false;
    if (plain) {
      if (end - from === model.length && json.startsWith(model, from)) return json;
      return `${json.slice(0, at)}"model":${JSON.stringify(model)}${json.slice(end + 1)}`;
    }
  }
  if (!json.includes('"model"')) return json;
  // Spaces, escapes, or a nested "model" first: as a parser sees it.
  const v = safeJson(json);
  if (!v || typeof v !== 'object' || Array.isArray(v) || !('model' in v)) return json;
  return JSON.stringify({ ...v, model });
}

/** The end of the JSON object that opens at `start`, or -1 (strings and escapes skipped). */
function objectEnd(json: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The top-level usage object of a serialized answer, read by parsing that object alone. OpenAI and Anthropic both
 * write usage last, and no quoted key can occur unescaped inside a string, so the last "usage": is the top-level
 * one; any other layout falls back to a full parse. Undefined when there is none (or it is null).
 */
export function usageOf<T>(json: string): T | undefined {
  const at = json.lastIndexOf('"usage":');
  if (at !== -1) {
    let i = at + 8;
    while (json.charCodeAt(i) === 32) i++;
    if (json.startsWith('null', i)) return undefined;
    const end = json.charCodeAt(i) === 123 ? objectEnd(json, i) : -1;
    const u = end === -1 ? undefined : safeJson(json.slice(i, end));
    if (u && typeof u === 'object') return u as T;
  }
  return (safeJson(json) as { usage?: T } | undefined)?.usage;
}
