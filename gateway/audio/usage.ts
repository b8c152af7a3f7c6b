// The usage an audio answer reports, read as it passes through: a JSON body's `usage` (tokens or duration) or
// verbose_json's `duration`; an event stream's transcript.text.done or speech.audio.done usage. Text, SRT, VTT and
// audio bytes report nothing: the call is then charged on the units the gateway measured (price.ts).
import { SseParser } from '../sse/parser.ts';
import type { AudioUsage } from './price.ts';

/** A JSON answer above this is not read for usage (it is still passed on whole). */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

type Mode = 'json' | 'sse' | 'none';

export function modeOf(contentType: string): Mode {
  const ct = contentType.toLowerCase();
  if (ct.startsWith('text/event-stream')) return 'sse';
  if (ct.startsWith('application/json')) return 'json';
  return 'none';
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** OpenAI's usage object of a transcription (tokens or duration) or a speech (input and output tokens). */
export function usageOf(u: unknown): AudioUsage {
  if (u === null || typeof u !== 'object') return {};
  const o = u as Record<string, unknown>;
  if (o.type === 'duration') return { seconds: num(o.seconds) };
  const details = o.input_token_details as Record<string, unknown> | undefined;
  const input = num(o.input_tokens);
  if (details && typeof details === 'object') {
    return { inputTokens: num(details.text_tokens) ?? 0, audioInputTokens: num(details.audio_tokens) ?? 0, outputTokens: num(o.output_tokens) };
  }
  // A transcription's input without details is audio; a speech's input is text.
  return o.type === 'tokens' ? { audioInputTokens: input, outputTokens: num(o.output_tokens) } : { inputTokens: input, outputTokens: num(o.output_tokens) };
}

export class UsageReader {
  private readonly mode: Mode;
  private readonly parser = new SseParser();
  private json: Buffer[] = [];
  private jsonBytes = 0;
  private usage: AudioUsage = {};
  /** Bytes of the answer passed on. */
  bytes = 0;

  constructor(contentType: string) {
    this.mode = modeOf(contentType);
  }

  push(chunk: Uint8Array | string): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += b.length;
    if (this.mode === 'sse') {
      for (const e of this.parser.push(b)) this.event(e.data);
    } else if (this.mode === 'json' && this.jsonBytes + b.length <= MAX_JSON_BYTES) {
      this.json.push(Buffer.from(b));
      this.jsonBytes += b.length;
    }
  }

  private event(data: string): void {
    if (!data.includes('"usage"')) return;
    try {
      const e = JSON.parse(data) as { type?: string; usage?: unknown };
      if (e.type === 'transcript.text.done' || e.type === 'speech.audio.done') this.usage = usageOf(e.usage);
    } catch {
      // Not JSON: no usage from it.
    }
  }

  /** What the answer reported, once it has ended. */
  result(): AudioUsage {
    if (this.mode !== 'json' || this.json.length === 0) return this.usage;
    try {
      const body = JSON.parse(Buffer.concat(this.json).toString('utf8')) as { usage?: unknown; duration?: unknown };
      const u = usageOf(body.usage);
      if (u.seconds === undefined && body.usage === undefined && num(body.duration) !== undefined) return { seconds: num(body.duration) };
      return u;
    } catch {
      return {};
    } finally {
      this.json = [];
    }
  }
}
