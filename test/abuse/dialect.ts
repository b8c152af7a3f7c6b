// The error shapes a caller's SDK can read: Anthropic's under /anthropic, Cohere's under /cohere, OpenAI's everywhere
// else. Any non-2xx answer must be one of them (docs/reference/errors.md).
export type Dialect = 'openai' | 'anthropic' | 'cohere';

export function dialectOfPath(path: string): Dialect {
  if (path.startsWith('/anthropic')) return 'anthropic';
  return path.startsWith('/cohere/') ? 'cohere' : 'openai';
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** null when `body` is a well-formed error of `dialect`, else what is wrong with it. */
export function dialectProblem(dialect: Dialect, body: string): string | null {
  let j: unknown;
  try {
    j = JSON.parse(body);
  } catch {
    return `not JSON: ${JSON.stringify(body.slice(0, 120))}`;
  }
  if (dialect === 'cohere') {
    // Cohere's: the message alone.
    if (!isObj(j) || typeof j.message !== 'string' || 'error' in j) return `not Cohere's shape: ${body.slice(0, 160)}`;
    return null;
  }
  if (!isObj(j) || !isObj(j.error)) return `no error object: ${body.slice(0, 160)}`;
  const e = j.error;
  if (dialect === 'anthropic') {
    if (j.type !== 'error' || typeof e.type !== 'string' || typeof e.message !== 'string') return `not Anthropic's shape: ${body.slice(0, 160)}`;
    return null;
  }
  if (typeof e.message !== 'string' || typeof e.type !== 'string' || typeof e.code !== 'string') return `not OpenAI's shape: ${body.slice(0, 160)}`;
  return null;
}

/** The error's code (OpenAI) or type (Anthropic), for assertions. */
export function errorCodeOf(body: string): string | undefined {
  try {
    const j = JSON.parse(body) as { type?: string; error?: { code?: string; type?: string } };
    return j.type === 'error' ? j.error?.type : j.error?.code;
  } catch {
    return undefined;
  }
}
