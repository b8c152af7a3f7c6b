// One catalog of every error the gateway answers with: stable code, HTTP status, and both dialects' shapes.
export type ErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'task_type_too_long'
  | 'unsupported_content'
  | 'content_filter'
  | 'previous_response_not_found'
  | 'conversation_too_large'
  | 'stored_responses_full'
  | 'content_blocked'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'key_revoked'
  | 'key_expired'
  | 'insufficient_balance'
  | 'budget_exceeded'
  | 'model_not_allowed'
  | 'endpoint_not_allowed'
  | 'model_not_found'
  | 'not_found'
  | 'request_too_large'
  | 'request_too_large_for_limit'
  | 'request_timeout'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'rate_limited'
  | 'upstream_error'
  | 'upstream_timeout'
  | 'no_target_available'
  | 'store_unavailable'
  | 'upstream_stream_error'
  | 'shutting_down'
  | 'internal_error';

type AnthropicType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error'
  | 'timeout_error';

interface Entry {
  status: number;
  openaiType: string;
  anthropicType: AnthropicType;
}

export const ERRORS: Record<ErrorCode, Entry> = {
  invalid_json: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  invalid_request: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  task_type_too_long: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  unsupported_content: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  content_filter: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  previous_response_not_found: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  conversation_too_large: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  stored_responses_full: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  content_blocked: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  missing_api_key: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error' },
  invalid_api_key: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error' },
  key_revoked: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error' },
  key_expired: { status: 401, openaiType: 'authentication_error', anthropicType: 'authentication_error' },
  insufficient_balance: { status: 402, openaiType: 'insufficient_quota', anthropicType: 'billing_error' },
  budget_exceeded: { status: 402, openaiType: 'insufficient_quota', anthropicType: 'billing_error' },
  model_not_allowed: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error' },
  endpoint_not_allowed: { status: 403, openaiType: 'permission_error', anthropicType: 'permission_error' },
  model_not_found: { status: 404, openaiType: 'invalid_request_error', anthropicType: 'not_found_error' },
  not_found: { status: 404, openaiType: 'invalid_request_error', anthropicType: 'not_found_error' },
  request_too_large: { status: 413, openaiType: 'invalid_request_error', anthropicType: 'request_too_large' },
  request_too_large_for_limit: { status: 400, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  request_timeout: { status: 408, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  uri_too_long: { status: 414, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  headers_too_large: { status: 431, openaiType: 'invalid_request_error', anthropicType: 'invalid_request_error' },
  rate_limited: { status: 429, openaiType: 'rate_limit_error', anthropicType: 'rate_limit_error' },
  upstream_error: { status: 502, openaiType: 'api_error', anthropicType: 'api_error' },
  upstream_timeout: { status: 504, openaiType: 'api_error', anthropicType: 'timeout_error' },
  no_target_available: { status: 503, openaiType: 'api_error', anthropicType: 'overloaded_error' },
  store_unavailable: { status: 503, openaiType: 'api_error', anthropicType: 'api_error' },
  upstream_stream_error: { status: 502, openaiType: 'api_error', anthropicType: 'api_error' },
  shutting_down: { status: 503, openaiType: 'api_error', anthropicType: 'overloaded_error' },
  internal_error: { status: 500, openaiType: 'api_error', anthropicType: 'api_error' },
};

/** The shape errors take: OpenAI's, Anthropic's, or Cohere's (on /cohere, for Cohere's clients). */
export type Dialect = 'openai' | 'anthropic' | 'cohere';

/** An error the pipeline answers with; `retryAfterSec` becomes the retry-after header. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly retryAfterSec: number | undefined;
  readonly param: string | undefined;
  constructor(code: ErrorCode, message: string, opts: { retryAfterSec?: number; param?: string } = {}) {
    super(message);
    this.code = code;
    this.retryAfterSec = opts.retryAfterSec;
    this.param = opts.param;
  }
  get status(): number {
    return ERRORS[this.code].status;
  }
}

export function errorBody(dialect: Dialect, code: ErrorCode, message: string, param?: string): unknown {
  const e = ERRORS[code];
  if (dialect === 'anthropic') return { type: 'error', error: { type: e.anthropicType, message } };
  // Cohere's API answers an error with its message alone (its SDK raises by status and keeps the body).
  if (dialect === 'cohere') return { message };
  return { error: { message, type: e.openaiType, param: param ?? null, code } };
}
