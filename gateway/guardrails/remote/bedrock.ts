// AWS Bedrock Guardrails ApplyGuardrail: POST {runtime}/guardrail/{id}/version/{version}/apply with {source: INPUT |
// OUTPUT, content: [{text: {text}}]}, signed with SigV4 (or a Bedrock API key as Bearer) by the identity code of the
// Bedrock provider. GUARDRAIL_INTERVENED with a policy that BLOCKED is a block; with only ANONYMIZED findings it is a
// mask: the guardrail's outputs replace the texts (one output per text sent; anything else is refused as a block).
import { cachedAuth, identity } from '../../providers/bedrock/credentials.ts';
import { signedHeaders } from '../../providers/bedrock/sign.ts';
import { UpstreamFailure } from '../../providers/types.ts';
import { asTarget } from './credential.ts';
import { bounded, isObj, postJson, type Obj } from './http.ts';
import { label, RemoteFailure, type Service, type ServiceVerdict } from './types.ts';

export const bedrock: Service = async ({ check, stage, texts, signal }) => {
  const s = check.service;
  if (s.kind !== 'bedrock') throw new Error('not a bedrock check');
  const target = asTarget(check, 'bedrock', { region: s.region, baseUrl: s.baseUrl });
  const base = s.baseUrl ?? `https://bedrock-runtime.${s.region}.amazonaws.com`;
  const url = `${base}/guardrail/${encodeURIComponent(s.guardrailIdentifier)}/version/${encodeURIComponent(s.guardrailVersion)}/apply`;
  const body = JSON.stringify({ source: stage === 'request' ? 'INPUT' : 'OUTPUT', content: texts.map((t) => ({ text: { text: t.text } })) });
  let headers: Record<string, string>;
  try {
    headers = await bounded(authHeaders(target, url, body), signal);
  } catch (err) {
    if (err instanceof UpstreamFailure) throw new RemoteFailure('credential', err.message);
    throw err;
  }
  return verdictOf(await postJson(url, headers, body, signal), texts.length);
};

async function authHeaders(target: ReturnType<typeof asTarget>, url: string, body: string): Promise<Record<string, string>> {
  const auth = await cachedAuth(target);
  if (auth.kind === 'bearer') return { authorization: `Bearer ${auth.token}` };
  await identity(target, auth.credentials);
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  const signed = await signedHeaders({ url, region: target.region ?? 'us-east-1', headers, body, credentials: auth.credentials });
  // fetch sends the URL's host itself (the one signed).
  return Object.fromEntries(Object.entries(signed).filter(([k]) => k.toLowerCase() !== 'host'));
}

/** Each finding of the assessments: its policy and type as a label, and whether it blocked. */
function findings(assessments: unknown): Array<{ kind: string; blocked: boolean }> {
  const out: Array<{ kind: string; blocked: boolean }> = [];
  const lists: Array<[string, string, string]> = [
    ['topicPolicy', 'topics', 'name'],
    ['contentPolicy', 'filters', 'type'],
    ['wordPolicy', 'customWords', 'match'],
    ['wordPolicy', 'managedWordLists', 'type'],
    ['sensitiveInformationPolicy', 'piiEntities', 'type'],
    ['sensitiveInformationPolicy', 'regexes', 'name'],
    ['contextualGroundingPolicy', 'filters', 'type'],
  ];
  for (const a of Array.isArray(assessments) ? (assessments as unknown[]) : []) {
    if (!isObj(a)) continue;
    for (const [policy, list, field] of lists) {
      const items = isObj(a[policy]) ? (a[policy] as Obj)[list] : undefined;
      for (const item of Array.isArray(items) ? (items as unknown[]) : []) {
        if (!isObj(item) || item.action === 'NONE') continue;
        // A custom word's match is the text itself: it is named by its policy only.
        const kind = field === 'match' ? 'word' : String(item[field] ?? 'finding');
        out.push({ kind: label(`${policy.replace('Policy', '')}:${kind}`), blocked: item.action === 'BLOCKED' });
      }
    }
  }
  return out;
}

export function verdictOf(answer: unknown, sent: number): ServiceVerdict {
  if (!isObj(answer) || typeof answer.action !== 'string') throw new RemoteFailure('bad_answer', 'the answer has no action');
  if (answer.action === 'NONE') return { action: 'allow' };
  if (answer.action !== 'GUARDRAIL_INTERVENED') throw new RemoteFailure('bad_answer', 'the answer has an unknown action');
  const found = findings(answer.assessments);
  const kinds = [...new Set(found.map((f) => f.kind))].sort();
  const outputs = Array.isArray(answer.outputs) ? (answer.outputs as unknown[]) : [];
  const maskable =
    found.length > 0 && found.every((f) => !f.blocked) && outputs.length === sent && outputs.every((o) => isObj(o) && typeof o.text === 'string');
  if (!maskable) return { action: 'block', kinds: kinds.length > 0 ? kinds : ['intervened'] };
  return { action: 'mask', kinds, texts: new Map(outputs.map((o, i) => [i, (o as { text: string }).text])) };
}
