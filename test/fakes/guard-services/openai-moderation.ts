// A fake of OpenAI's moderation endpoint (POST /v1/moderations) in its wire format: one result per input, every
// category named with a boolean and a score, flagged when one is true. It flags "kill" as violence and "hurt myself"
// as self-harm; it refuses a call without its API key as OpenAI does (401 invalid_api_key).
import { startJsonFake, type Answer, type JsonFake, type ServiceCall } from './json-server.ts';

const CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

function resultOf(text: string): Record<string, unknown> {
  const hit = new Set<string>();
  if (/\bkill\b/i.test(text)) hit.add('violence');
  if (/hurt myself/i.test(text)) for (const c of ['self-harm', 'self-harm/intent']) hit.add(c);
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, hit.has(c)]));
  const scores = Object.fromEntries(CATEGORIES.map((c) => [c, hit.has(c) ? 0.97 : 0.0001]));
  const types = Object.fromEntries(CATEGORIES.map((c) => [c, hit.has(c) ? ['text'] : []]));
  return { flagged: hit.size > 0, categories, category_scores: scores, category_applied_input_types: types };
}

export function startFakeModeration(apiKey: string): Promise<JsonFake> {
  return startJsonFake((call: ServiceCall): Answer => {
    if (call.headers.authorization !== `Bearer ${apiKey}`)
      return { status: 401, json: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } };
    if (call.method !== 'POST' || call.path !== '/v1/moderations')
      return { status: 404, json: { error: { message: 'not found', type: 'invalid_request_error' } } };
    const input = call.body.input;
    const texts =
      typeof input === 'string'
        ? [input]
        : Array.isArray(input)
          ? input.map((x) => (typeof x === 'string' ? x : String((x as { text?: string }).text ?? '')))
          : [];
    return { json: { id: `modr-${call.raw.length}`, model: String(call.body.model ?? 'omni-moderation-latest'), results: texts.map(resultOf) } };
  });
}
