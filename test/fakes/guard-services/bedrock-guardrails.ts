// A fake of Bedrock Guardrails' ApplyGuardrail (POST /guardrail/{id}/version/{version}/apply) in its wire format,
// checking SigV4 as AWS does (test/fakes/bedrock/sigv4-check.ts). The guardrail it plays: a denied topic
// "Investment" (any text naming invest*: BLOCKED, with the blocked message as output) and an email PII filter that
// anonymizes ({EMAIL}, one output per text sent). Unknown guardrail: 404 ResourceNotFoundException.
import { checkAuth, type FakeAwsKey } from '../bedrock/sigv4-check.ts';
import { startJsonFake, type Answer, type JsonFake } from './json-server.ts';

const EMAIL = /[\w.+-]+@[\w-]+\.[\w.]+/g;
export const BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.';

export function startFakeBedrockGuardrails(opts: { guardrailId: string; version: string; keys: FakeAwsKey[] }): Promise<JsonFake> {
  const keys = new Map(opts.keys.map((k) => [k.accessKeyId, k]));
  return startJsonFake(async (call): Promise<Answer> => {
    const auth = await checkAuth({ method: call.method, rawPath: call.path, headers: call.headers, body: call.raw, keys, apiKeys: new Set() });
    if (!auth.ok) return { status: auth.status, json: { message: auth.message, __type: auth.type } };
    const m = /^\/guardrail\/([^/]+)\/version\/([^/]+)\/apply$/.exec(call.path);
    if (!m || decodeURIComponent(m[1]!) !== opts.guardrailId || decodeURIComponent(m[2]!) !== opts.version)
      return { status: 404, json: { message: 'The guardrail identifier or version provided does not exist.' } };
    const texts = ((call.body.content as Array<{ text?: { text?: string } }>) ?? []).map((c) => c.text?.text ?? '');
    const usage = {
      topicPolicyUnits: 1,
      contentPolicyUnits: 1,
      wordPolicyUnits: 1,
      sensitiveInformationPolicyUnits: 1,
      sensitiveInformationPolicyFreeUnits: 0,
      contextualGroundingPolicyUnits: 0,
    };
    if (texts.some((t) => /invest/i.test(t)))
      return {
        json: {
          usage,
          action: 'GUARDRAIL_INTERVENED',
          actionReason: 'Guardrail blocked.',
          outputs: [{ text: BLOCKED_MESSAGE }],
          assessments: [{ topicPolicy: { topics: [{ name: 'Investment', type: 'DENY', action: 'BLOCKED', detected: true }] } }],
        },
      };
    const emails = texts.flatMap((t) => t.match(EMAIL) ?? []);
    if (emails.length > 0)
      return {
        json: {
          usage,
          action: 'GUARDRAIL_INTERVENED',
          actionReason: 'Guardrail masked.',
          outputs: texts.map((t) => ({ text: t.replace(EMAIL, '{EMAIL}') })),
          assessments: [
            {
              sensitiveInformationPolicy: { piiEntities: emails.map((e) => ({ match: e, type: 'EMAIL', action: 'ANONYMIZED', detected: true })), regexes: [] },
            },
          ],
        },
      };
    return { json: { usage, action: 'NONE', actionReason: 'No action.', outputs: [], assessments: [{}] } };
  });
}
