// The x-svc-* headers every proxied answer carries (docs/api.md: OpenAI-compatible API, headers).
import type { Route } from './dispatch.ts';

/** Seconds until the key expires, on answers to a key within 7 days of its expiry (gateway/contract/key-expiry.ts). */
export const KEY_EXPIRES_IN_HEADER = 'x-svc-key-expires-in';

export function routeHeaders(requestedModel: string, route: Route | null): Record<string, string> {
  const h: Record<string, string> = {
    'x-svc-original-model': requestedModel,
    'x-svc-fallback': route?.fallback ? 'true' : 'false',
  };
  if (route) {
    h['x-svc-upstream'] = route.target.name;
    h['x-svc-served-model'] = route.model.id;
    if (route.fallback && route.fallbackReason) h['x-svc-fallback-reason'] = route.fallbackReason;
    if (route.droppedTools && route.droppedTools.length > 0) h['x-svc-dropped-tools'] = route.droppedTools.join(', ');
  }
  return h;
}
