// Google Model Armor: POST {base}/v1/projects/{p}/locations/{l}/templates/{t}:sanitizeUserPrompt ({userPromptData:
// {text}}) on the request and :sanitizeModelResponse ({modelResponseData: {text}}) on the answer, with an OAuth token
// from the Vertex provider's identity code. filterMatchState MATCH_FOUND is a match, named by the filters that
// matched (rai, pi_and_jailbreak, malicious_uris, csam, sdp). Block or log only.
import { sharedGoogleTokens } from '../../providers/google/auth.ts';
import { UpstreamFailure } from '../../providers/types.ts';
import { asTarget } from './credential.ts';
import { bounded, isObj, postJson, type Obj } from './http.ts';
import { label, RemoteFailure, type Service } from './types.ts';

export const modelArmor: Service = async ({ check, stage, texts, signal }) => {
  const s = check.service;
  if (s.kind !== 'model-armor') throw new Error('not a model-armor check');
  let token: string;
  try {
    token = await bounded(sharedGoogleTokens().bearer(asTarget(check, 'vertex', { project: s.project, region: s.location })), signal);
  } catch (err) {
    if (err instanceof UpstreamFailure) throw new RemoteFailure('credential', err.message);
    throw err;
  }
  const base = s.baseUrl ?? `https://modelarmor.${s.location}.rep.googleapis.com`;
  const template = `projects/${encodeURIComponent(s.project)}/locations/${encodeURIComponent(s.location)}/templates/${encodeURIComponent(s.template)}`;
  const text = texts.map((t) => t.text).join('\n');
  const [op, body] = stage === 'request' ? ['sanitizeUserPrompt', { userPromptData: { text } }] : ['sanitizeModelResponse', { modelResponseData: { text } }];
  const answer = await postJson(`${base}/v1/${template}:${op}`, { authorization: `Bearer ${token}` }, JSON.stringify(body), signal);
  const r = isObj(answer) ? answer.sanitizationResult : undefined;
  if (!isObj(r) || typeof r.filterMatchState !== 'string') throw new RemoteFailure('bad_answer', 'the answer has no sanitizationResult');
  if (r.filterMatchState !== 'MATCH_FOUND') return { action: 'allow' };
  return { action: 'block', kinds: matched(r.filterResults) };
};

/** The filters whose result says MATCH_FOUND (each result is one object: {raiFilterResult: {matchState, ...}}). */
function matched(results: unknown): string[] {
  const out: string[] = [];
  for (const [name, r] of Object.entries(isObj(results) ? results : {})) {
    const inner = isObj(r) ? Object.values(r).find(isObj) : undefined;
    if (inner && (inner as Obj).matchState === 'MATCH_FOUND') out.push(label(name));
    const sdp = inner && isObj((inner as Obj).inspectResult) ? ((inner as Obj).inspectResult as Obj) : undefined;
    if (sdp?.matchState === 'MATCH_FOUND') out.push(label(name));
  }
  return out.length > 0 ? [...new Set(out)].sort() : ['match-found'];
}
