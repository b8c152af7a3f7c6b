// OpenAI's moderation endpoint: POST {baseUrl}/moderations {model, input: [texts]}; a result whose listed categories
// (or, with none listed, whose `flagged`) is true is a match. It rewrites nothing: block or log only.
import { credentialValueOf } from './credential.ts';
import { isObj, postJson } from './http.ts';
import { label, RemoteFailure, type Service } from './types.ts';

export const openaiModeration: Service = async ({ check, texts, signal }) => {
  const s = check.service;
  if (s.kind !== 'openai-moderation') throw new Error('not an openai-moderation check');
  const key = credentialValueOf(check);
  const body = JSON.stringify({ model: s.model, input: texts.map((t) => t.text) });
  const answer = await postJson(`${s.baseUrl}/moderations`, key ? { authorization: `Bearer ${key}` } : {}, body, signal);
  if (!isObj(answer) || !Array.isArray(answer.results)) throw new RemoteFailure('bad_answer', 'the answer has no results');
  const kinds = new Set<string>();
  for (const r of answer.results as unknown[]) {
    if (!isObj(r) || !isObj(r.categories)) throw new RemoteFailure('bad_answer', 'a result has no categories');
    const categories = r.categories as Record<string, unknown>;
    if (s.categories) for (const c of s.categories) if (categories[c] === true) kinds.add(label(c));
    if (!s.categories && r.flagged === true) for (const [c, v] of Object.entries(categories)) if (v === true) kinds.add(label(c));
    if (!s.categories && r.flagged === true && kinds.size === 0) kinds.add('flagged');
  }
  return kinds.size > 0 ? { action: 'block', kinds: [...kinds].sort() } : { action: 'allow' };
};
