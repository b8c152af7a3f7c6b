// Azure AI Content Safety: text analysis (POST {endpoint}/contentsafety/text:analyze: each category at or above the
// check's severity threshold is a match) and Prompt Shields (POST {endpoint}/contentsafety/text:shieldPrompt, on the
// request only: an attack in the user's prompt or in a document, i.e. a tool result, is a match). The key (from a
// Secret or the environment) goes as Ocp-Apim-Subscription-Key; Entra ID tokens come from the Azure OpenAI provider's
// identity code (the Cognitive Services scope covers Content Safety). Block or log only: it rewrites nothing.
import { AzureAuth } from '../../providers/azure-openai/auth.ts';
import { UpstreamFailure } from '../../providers/types.ts';
import { asTarget } from './credential.ts';
import { bounded, isObj, postJson } from './http.ts';
import { label, RemoteFailure, type RemoteText, type Service } from './types.ts';

const auth = new AzureAuth();
/** text:analyze takes at most 10,000 characters a call. */
const ANALYZE_MAX = 10_000;

async function headersOf(check: Parameters<Service>[0]['check'], signal: AbortSignal): Promise<Record<string, string>> {
  try {
    const h = await bounded(auth.headers(asTarget(check, 'azure-openai')), signal);
    const key = h['api-key'];
    return key === undefined ? h : { 'Ocp-Apim-Subscription-Key': key };
  } catch (err) {
    if (err instanceof UpstreamFailure) throw new RemoteFailure('credential', err.message);
    throw err;
  }
}

function chunks(texts: readonly RemoteText[]): string[] {
  const joined = texts.map((t) => t.text).join('\n');
  const out: string[] = [];
  for (let i = 0; i < joined.length; i += ANALYZE_MAX) out.push(joined.slice(i, i + ANALYZE_MAX));
  return out;
}

export const azureContentSafety: Service = async ({ check, stage, texts, signal }) => {
  const s = check.service;
  if (s.kind !== 'azure-content-safety') throw new Error('not an azure-content-safety check');
  const headers = await headersOf(check, signal);
  const url = (op: string): string => `${s.endpoint}/contentsafety/text:${op}?api-version=${encodeURIComponent(s.apiVersion)}`;
  const kinds = new Set<string>();
  const calls: Array<Promise<void>> = [];
  if (s.analyze) {
    const { categories, severityThreshold } = s.analyze;
    for (const text of chunks(texts)) {
      const body = JSON.stringify({ text, categories, outputType: 'FourSeverityLevels' });
      calls.push(
        postJson(url('analyze'), headers, body, signal).then((a) => {
          if (!isObj(a) || !Array.isArray(a.categoriesAnalysis)) throw new RemoteFailure('bad_answer', 'the answer has no categoriesAnalysis');
          for (const c of a.categoriesAnalysis as unknown[])
            if (isObj(c) && typeof c.category === 'string' && typeof c.severity === 'number' && c.severity >= severityThreshold) kinds.add(label(c.category));
        }),
      );
    }
  }
  if (s.promptShields && stage === 'request') {
    // Tool results are documents (indirect attacks); the rest is the user's prompt.
    const documents = texts.filter((t) => t.document).map((t) => t.text);
    const userPrompt = texts
      .filter((t) => !t.document)
      .map((t) => t.text)
      .join('\n');
    calls.push(
      postJson(url('shieldPrompt'), headers, JSON.stringify({ userPrompt, documents }), signal).then((a) => {
        if (!isObj(a) || !isObj(a.userPromptAnalysis)) throw new RemoteFailure('bad_answer', 'the answer has no userPromptAnalysis');
        if (a.userPromptAnalysis.attackDetected === true) kinds.add('prompt-attack');
        const docs = Array.isArray(a.documentsAnalysis) ? (a.documentsAnalysis as unknown[]) : [];
        if (docs.some((d) => isObj(d) && d.attackDetected === true)) kinds.add('document-attack');
      }),
    );
  }
  await Promise.all(calls);
  return kinds.size > 0 ? { action: 'block', kinds: [...kinds].sort() } : { action: 'allow' };
};
