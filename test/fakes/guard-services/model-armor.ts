// A fake Google Model Armor (REST, v1): POST /v1/projects/{p}/locations/{l}/templates/{t}:sanitizeUserPrompt and
// :sanitizeModelResponse, answering a SanitizationResult as the service does (filterMatchState, and one FilterResult
// per filter the template runs). "ignore previous instructions" matches pi_and_jailbreak; "bomb" matches rai
// (dangerous). It takes only a bearer token its `valid` accepts (the fake metadata server's), else 401.
import { startJsonFake, type Answer, type JsonFake } from './json-server.ts';

const PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/templates\/([^/:]+):(sanitizeUserPrompt|sanitizeModelResponse)$/;
const state = (hit: boolean): string => (hit ? 'MATCH_FOUND' : 'NO_MATCH_FOUND');

function resultOf(text: string): Record<string, unknown> {
  const jailbreak = /ignore (all )?previous instructions/i.test(text);
  const dangerous = /\bbomb\b/i.test(text);
  return {
    sanitizationResult: {
      filterMatchState: state(jailbreak || dangerous),
      invocationResult: 'SUCCESS',
      filterResults: {
        pi_and_jailbreak: {
          piAndJailbreakFilterResult: { executionState: 'EXECUTION_SUCCESS', matchState: state(jailbreak), confidenceLevel: jailbreak ? 'HIGH' : undefined },
        },
        rai: {
          raiFilterResult: {
            executionState: 'EXECUTION_SUCCESS',
            matchState: state(dangerous),
            raiFilterTypeResults: { dangerous: { matchState: state(dangerous), confidenceLevel: dangerous ? 'HIGH' : undefined } },
          },
        },
      },
    },
  };
}

export function startFakeModelArmor(opts: { project: string; location: string; template: string; valid: (token: string) => boolean }): Promise<JsonFake> {
  return startJsonFake((call): Answer => {
    const token = String(call.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!opts.valid(token))
      return { status: 401, json: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } };
    const m = PATH.exec(call.path.split('?')[0]!);
    if (!m || m[1] !== opts.project || m[2] !== opts.location || m[3] !== opts.template)
      return { status: 404, json: { error: { code: 404, message: 'Template not found.', status: 'NOT_FOUND' } } };
    const data = (m[4] === 'sanitizeUserPrompt' ? call.body.userPromptData : call.body.modelResponseData) as { text?: string } | undefined;
    if (typeof data?.text !== 'string') return { status: 400, json: { error: { code: 400, message: 'Missing data.', status: 'INVALID_ARGUMENT' } } };
    return { json: resultOf(data.text) };
  });
}
