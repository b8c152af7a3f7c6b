// Anthropic's stream framing: `event: <type>` then `data: <json>`, one event per block.
import type { SseEvent } from '../../sse/parser.ts';

export function anthropicEvent(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An upstream event written back as it came (multi-line data kept as several data lines). */
export function rawEvent(ev: SseEvent): string {
  const head = ev.event !== undefined ? `event: ${ev.event}\n` : '';
  return `${head}${ev.data
    .split('\n')
    .map((l) => `data: ${l}`)
    .join('\n')}\n\n`;
}

/** The explicit end of a failed stream, as Anthropic sends it (the SDK raises it as an APIError). */
export function anthropicErrorEvent(message: string, type = 'api_error'): string {
  return anthropicEvent('error', { type: 'error', error: { type, message } });
}
