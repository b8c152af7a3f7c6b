// A fake Azure AI Content Safety resource: text:analyze (categoriesAnalysis with FourSeverityLevels severities: "kill"
// is Violence 4, "idiot" Hate 2) and text:shieldPrompt (an attack when the prompt or a document says "ignore previous
// instructions"), as the REST API answers them. It takes the resource key (Ocp-Apim-Subscription-Key) or an Entra ID
// token the fake Entra issued for the Cognitive Services scope, and answers 401 otherwise, as the service does.
import type { FakeEntra } from '../azure/entra.ts';
import { startJsonFake, type Answer, type JsonFake } from './json-server.ts';

const ATTACK = /ignore (all )?previous instructions/i;

function analyze(text: string, categories: string[]): Record<string, unknown> {
  const severity = (c: string): number => (c === 'Violence' && /\bkill\b/i.test(text) ? 4 : c === 'Hate' && /\bidiot\b/i.test(text) ? 2 : 0);
  return { blocklistsMatch: [], categoriesAnalysis: categories.map((category) => ({ category, severity: severity(category) })) };
}

export function startFakeContentSafety(opts: { key: string; entra?: FakeEntra }): Promise<JsonFake> {
  return startJsonFake((call): Answer => {
    const bearer = String(call.headers.authorization ?? '').replace(/^Bearer /, '');
    const authorized = call.headers['ocp-apim-subscription-key'] === opts.key || (opts.entra !== undefined && bearer !== '' && opts.entra.valid(bearer));
    if (!authorized) return { status: 401, json: { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } } };
    const url = new URL(call.path, 'http://x');
    if (!url.searchParams.get('api-version')) return { status: 404, json: { error: { code: '404', message: 'Resource not found' } } };
    if (url.pathname === '/contentsafety/text:analyze') {
      const text = String(call.body.text ?? '');
      if (text.length > 10_000) return { status: 400, json: { error: { code: 'InvalidRequestBody', message: 'The text is too long.' } } };
      const cats = Array.isArray(call.body.categories) ? (call.body.categories as string[]) : ['Hate', 'SelfHarm', 'Sexual', 'Violence'];
      return { json: analyze(text, cats) };
    }
    if (url.pathname === '/contentsafety/text:shieldPrompt') {
      const docs = Array.isArray(call.body.documents) ? (call.body.documents as string[]) : [];
      return {
        json: {
          userPromptAnalysis: { attackDetected: ATTACK.test(String(call.body.userPrompt ?? '')) },
          documentsAnalysis: docs.map((d) => ({ attackDetected: ATTACK.test(d) })),
        },
      };
    }
    return { status: 404, json: { error: { code: '404', message: 'Resource not found' } } };
  });
}
