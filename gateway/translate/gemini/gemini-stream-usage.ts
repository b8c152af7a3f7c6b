// Usage of a Gemini stream so far: every chunk carries usageMetadata with the counts up to it, so the latest one
// is kept. Until one arrives, each content part seen counts as at least one output token, so a stream cut early
// is not billed as nothing (the flags still say the upstream reported no count).
import { fromGeminiUsage, type GeminiUsage } from './gemini-usage.ts';
import { isObject, type Json } from '../json-read.ts';
import type { Usage } from '../types.ts';

export class GeminiStreamUsage {
  private seen: GeminiUsage | null = null;
  private parts = 0;

  /** A chunk's usageMetadata, if it has one. */
  chunk(r: Json): void {
    if (isObject(r.usageMetadata)) this.seen = r.usageMetadata as GeminiUsage;
  }

  /** Content parts passed on. */
  content(parts: number): void {
    this.parts += parts;
  }

  usage(): Usage {
    const u = fromGeminiUsage(this.seen);
    return { ...u, outputTokens: Math.max(u.outputTokens, this.parts) };
  }
}
