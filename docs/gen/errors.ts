// docs/reference/errors.md: the error catalog (gateway/errors/catalog.ts), each code with its status and the body a
// caller gets in each dialect, rendered by the same errorBody() the gateway answers with.
import { ERRORS, errorBody, type ErrorCode } from '../../gateway/errors/catalog.ts';
import { code, header, table } from './markdown.ts';

export function errorsPage(): string {
  const codes = (Object.keys(ERRORS) as ErrorCode[]).sort((a, b) => ERRORS[a].status - ERRORS[b].status || a.localeCompare(b));
  const rows = codes.map((c) => {
    const e = ERRORS[c];
    return [String(e.status), code(c), code(e.openaiType), code(e.anthropicType)];
  });
  const example: ErrorCode = 'rate_limited';
  return [
    header('Errors', 'gateway/errors/catalog.ts'),
    'Every error the gateway answers with has a stable code and status, and a shape in each dialect: the OpenAI shape',
    'under `/v1` (and on every path outside `/anthropic`), the Anthropic shape under `/anthropic`. When each one happens:',
    '[api.md](../api.md#openai-compatible-api) (OpenAI) and [api.md](../api.md#endpoints) (Anthropic). A 429 and a 503 carry',
    '`retry-after`. A stream that fails after its first byte ends with an error event carrying the same body.',
    '',
    table(['status', 'code', 'OpenAI `error.type`', 'Anthropic `error.type`'], rows),
    '',
    `The bodies, for \`${example}\` (the \`message\` says what happened and what to do; \`param\` names the field at fault, when one is):`,
    '',
    'OpenAI dialect:',
    '',
    '```json',
    JSON.stringify(errorBody('openai', example, 'Rate limit of 60 requests per minute reached.')),
    '```',
    '',
    'Anthropic dialect (the code is not in the body: the type and the status carry it):',
    '',
    '```json',
    JSON.stringify(errorBody('anthropic', example, 'Rate limit of 60 requests per minute reached.')),
    '```',
    '',
  ].join('\n');
}
