// The webhook check: the team's own HTTP service, called with a documented JSON contract (docs/guardrails.md,
// "Webhook"). Request: {guardrail, check, stage, endpoint, dialect, model, account, apiKey, texts: [{index, path,
// text}]}; answer: {action: allow | block | mask, reason?, categories?, replacements?: [{index, start, end,
// replacement}]} with [start, end) UTF-16 offsets into texts[index].text. Anything else is a bad answer (the failure
// mode decides); the reason is never logged or shown (it may quote the text).
import { credentialValueOf } from './credential.ts';
import { isObj, postJson, type Obj } from './http.ts';
import { label, RemoteFailure, type Service, type ServiceVerdict } from './types.ts';

export const webhook: Service = async (input) => {
  const { check, stage, texts, meta } = input;
  if (check.service.kind !== 'webhook') throw new Error('not a webhook check');
  const token = credentialValueOf(check);
  const body = JSON.stringify({
    guardrail: input.guardrail,
    check: check.name,
    stage,
    ...meta,
    texts: texts.map((t, index) => ({ index, path: t.path, text: t.text })),
  });
  const answer = await postJson(check.service.url, token ? { authorization: `Bearer ${token}` } : {}, body, input.signal);
  return verdictOf(
    answer,
    texts.map((t) => t.text),
  );
};

export function verdictOf(answer: unknown, texts: readonly string[]): ServiceVerdict {
  if (!isObj(answer)) throw new RemoteFailure('bad_answer', 'the answer is not a JSON object');
  const kinds = Array.isArray(answer.categories)
    ? answer.categories
        .filter((c): c is string => typeof c === 'string')
        .slice(0, 5)
        .map(label)
    : [];
  switch (answer.action) {
    case 'allow':
      return { action: 'allow' };
    case 'block':
      return { action: 'block', kinds: kinds.length > 0 ? kinds : ['webhook'] };
    case 'mask':
      return { action: 'mask', kinds: kinds.length > 0 ? kinds : ['webhook'], texts: replaced(answer.replacements, texts) };
    default:
      throw new RemoteFailure('bad_answer', 'the answer has no action allow, block or mask');
  }
}

interface Replacement {
  index: number;
  start: number;
  end: number;
  replacement: string;
}

function isReplacement(r: unknown, texts: readonly string[]): r is Replacement {
  if (!isObj(r)) return false;
  const { index, start, end, replacement } = r as Obj;
  if (!Number.isInteger(index) || !Number.isInteger(start) || !Number.isInteger(end) || typeof replacement !== 'string') return false;
  const text = texts[index as number];
  return text !== undefined && (start as number) >= 0 && (start as number) <= (end as number) && (end as number) <= text.length;
}

/** The masked texts by index; overlapping or out-of-range replacements make a bad answer. */
function replaced(list: unknown, texts: readonly string[]): Map<number, string> {
  if (!Array.isArray(list) || list.length === 0) throw new RemoteFailure('bad_answer', 'a mask answer without replacements');
  if (!list.every((r) => isReplacement(r, texts))) throw new RemoteFailure('bad_answer', 'a replacement is malformed or out of range');
  const byText = new Map<number, Replacement[]>();
  for (const r of list) byText.set(r.index, [...(byText.get(r.index) ?? []), r]);
  const out = new Map<number, string>();
  for (const [index, rs] of byText) {
    rs.sort((a, b) => a.start - b.start);
    const text = texts[index]!;
    let s = '';
    let at = 0;
    for (const r of rs) {
      if (r.start < at) throw new RemoteFailure('bad_answer', 'replacements overlap');
      s += text.slice(at, r.start) + r.replacement;
      at = r.end;
    }
    out.set(index, s + text.slice(at));
  }
  return out;
}
