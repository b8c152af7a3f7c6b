// Response ids across protocols: each side gets an id in the shape its SDKs expect, derived from the upstream's.
function clean(id: unknown): string {
  return typeof id === 'string' ? id.replace(/[^A-Za-z0-9_-]/g, '') : '';
}

/** An Anthropic-style message id (msg_…) for an OpenAI completion id. */
export function messageId(openAIId: unknown): string {
  const tail = clean(typeof openAIId === 'string' ? openAIId.replace(/^chatcmpl-/, '') : '');
  return `msg_${tail || Date.now().toString(36)}`;
}

/** An OpenAI-style completion id (chatcmpl-…) for an Anthropic message id. */
export function completionId(anthropicId: unknown): string {
  const tail = clean(typeof anthropicId === 'string' ? anthropicId.replace(/^msg_/, '') : '');
  return `chatcmpl-${tail || Date.now().toString(36)}`;
}
