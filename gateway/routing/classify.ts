// Why an attempt failed, and whether the next target may be tried (only before the client saw a byte).
import type { UpstreamOutcome } from '../providers/types.ts';

export type FallbackReason = 'timeout' | 'connect_error' | 'credential_error' | 'upstream_5xx' | 'upstream_429' | 'unavailable';

/** The fallback reason an upstream error status stands for, or null when it must reach the client as it is. */
export function reasonForStatus(status: number): FallbackReason | null {
  if (status === 429) return 'upstream_429';
  if (status >= 500) return 'upstream_5xx';
  return null;
}

/**
 * The fallback reason of a stream whose first event is an error: a throttling error in any dialect (Anthropic's
 * rate_limit_error, Bedrock's ThrottlingException, Google's RESOURCE_EXHAUSTED) is upstream_429, anything else
 * upstream_5xx. A plain substring test: it runs only on that first error event.
 */
export function reasonForStreamError(data: string): FallbackReason {
  return /"(?:rate_limit_error|[Tt]hrottlingException|RESOURCE_EXHAUSTED)"/.test(data) ? 'upstream_429' : 'upstream_5xx';
}

export function reasonForOutcome(o: UpstreamOutcome): FallbackReason | null {
  return o.kind === 'error' ? reasonForStatus(o.status) : null;
}

/** Seconds from an upstream retry-after header (seconds or HTTP date), bounded to [1, 3600]. */
export function retryAfterSeconds(header: string | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const n = Number(header);
  const secs = Number.isFinite(n) ? n : (Date.parse(header) - now) / 1000;
  if (!Number.isFinite(secs)) return undefined;
  return Math.min(3600, Math.max(1, Math.ceil(secs)));
}

/**
 * An upstream's content filter refused the prompt (Azure OpenAI: 400 with error.code content_filter, innererror
 * ResponsibleAIPolicyViolation). That is the answer to the request, not a failure of the upstream: it reaches the
 * client as the content_filter error and no other target is tried.
 */
export function isContentFilterRefusal(status: number, body: string): boolean {
  if (status !== 400 || !body.includes('content_filter')) return false;
  try {
    const e = (JSON.parse(body) as { error?: { code?: unknown; innererror?: { code?: unknown } } }).error;
    return e?.code === 'content_filter' || e?.innererror?.code === 'ResponsibleAIPolicyViolation';
  } catch {
    return false;
  }
}
