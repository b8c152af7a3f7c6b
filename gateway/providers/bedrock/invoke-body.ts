// Claude on Bedrock Invoke: the Anthropic Messages body the anthropic translators produce, without `model` (in the
// URL) and `stream` (in the action), with Bedrock's anthropic_version, and the client's anthropic-beta header as the
// `anthropic_beta` body field (Bedrock reads betas from the body). The caller's body string is parsed into a new
// object: nothing is mutated.

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

function betas(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function invokeBody(messagesBody: string, headers: Record<string, string>): Record<string, unknown> {
  const { model: _m, stream: _s, ...rest } = JSON.parse(messagesBody) as Record<string, unknown>;
  const out: Record<string, unknown> = { ...rest, anthropic_version: BEDROCK_ANTHROPIC_VERSION };
  const beta = betas(headers['anthropic-beta']);
  if (beta.length > 0) out.anthropic_beta = beta;
  return out;
}

/**
 * Bedrock's CountTokens takes the InvokeModel body (base64, as the JSON protocol sends blobs); a Claude Invoke body
 * needs max_tokens, which count_tokens requests do not carry (it counts no output).
 */
export function countTokensBody(countBody: string, headers: Record<string, string>): string {
  const body = invokeBody(countBody, headers);
  if (typeof body.max_tokens !== 'number') body.max_tokens = 1;
  return JSON.stringify({ input: { invokeModel: { body: Buffer.from(JSON.stringify(body)).toString('base64') } } });
}

/**
 * CountTokens for a Converse request: the fields of the Converse body that make up the prompt (messages, system,
 * toolConfig, additionalModelRequestFields), as the converse translators build it.
 */
export function converseCountTokensBody(converseBody: string): string {
  const { messages, system, toolConfig, additionalModelRequestFields } = JSON.parse(converseBody) as Record<string, unknown>;
  return JSON.stringify({ input: { converse: { messages, system, toolConfig, additionalModelRequestFields } } });
}

/** CountTokens answers `{inputTokens}`; the Anthropic client expects `{input_tokens}`. */
export function countTokensAnswer(body: string): string {
  const n = (JSON.parse(body) as { inputTokens?: unknown }).inputTokens;
  return JSON.stringify({ input_tokens: typeof n === 'number' ? n : 0 });
}
