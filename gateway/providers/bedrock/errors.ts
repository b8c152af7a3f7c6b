// Bedrock's errors (x-amzn-errortype header, or __type in the body) as the statuses the fallback classification
// knows: throttling and a model not ready yet are 429 (another target may take the call), unavailable and internal
// errors 5xx, a model timeout is a timeout, a refused request (ValidationException) reaches the client as its error,
// a refused credential (AccessDenied, UnrecognizedClient, InvalidSignature, ExpiredToken) is a 403, which the
// pipeline reports without naming any credential.
import { UpstreamFailure, type Protocol, type UpstreamOutcome } from '../types.ts';

/** `ThrottlingException:http://internal.amazon.com/coral/...` or `com.amazon.bedrock#ThrottlingException` → the name. */
export function errorTypeName(raw: string | undefined): string {
  if (!raw) return '';
  const noSuffix = raw.split(':')[0] ?? '';
  return noSuffix.slice(noSuffix.lastIndexOf('#') + 1);
}

const STATUS_OF: Record<string, number> = {
  ThrottlingException: 429,
  ModelNotReadyException: 429,
  ServiceQuotaExceededException: 429,
  ServiceUnavailableException: 503,
  InternalServerException: 500,
  ModelErrorException: 502,
  ModelStreamErrorException: 502,
  ValidationException: 400,
  ResourceNotFoundException: 404,
  AccessDeniedException: 403,
  UnrecognizedClientException: 403,
  InvalidSignatureException: 403,
  ExpiredTokenException: 403,
  IncompleteSignatureException: 403,
};

function messageOf(body: string): string {
  try {
    const j = JSON.parse(body) as { message?: unknown; Message?: unknown };
    const m = j.message ?? j.Message;
    return typeof m === 'string' ? m : '';
  } catch {
    return '';
  }
}

function typeInBody(body: string): string | undefined {
  try {
    const t = (JSON.parse(body) as { __type?: unknown }).__type;
    return typeof t === 'string' ? t : undefined;
  } catch {
    return undefined;
  }
}

/** Anthropic's error type for a Bedrock exception (the body an Anthropic client and translator read). */
export function anthropicErrorType(type: string, status: number): string {
  if (status === 429) return 'rate_limit_error';
  if (type === 'ServiceUnavailableException') return 'overloaded_error';
  if (status === 400) return 'invalid_request_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  return 'api_error';
}

/**
 * A non-2xx Bedrock answer as the outcome the pipeline classifies. For the anthropic protocol the body becomes
 * Anthropic's error shape (its translators read `error.message`); for converse it stays Bedrock's `{message}`.
 */
export function bedrockError(
  status: number,
  errorType: string | undefined,
  body: string,
  retryAfter: string | undefined,
  protocol: Protocol,
): Extract<UpstreamOutcome, { kind: 'error' }> {
  const type = errorTypeName(errorType) || errorTypeName(typeInBody(body));
  const message = messageOf(body);
  if (type === 'ModelTimeoutException' || status === 408) {
    throw new UpstreamFailure('timeout', `Bedrock: the model timed out${message ? ` (${message.slice(0, 200)})` : ''}`);
  }
  const mapped = STATUS_OF[type] ?? status;
  const text = message || `${type || 'error'} (${status})`;
  const out =
    protocol === 'anthropic'
      ? JSON.stringify({ type: 'error', error: { type: anthropicErrorType(type, mapped), message: text } })
      : JSON.stringify({ message: text, ...(type ? { __type: type } : {}) });
  return { kind: 'error', status: mapped, body: out, retryAfter };
}
