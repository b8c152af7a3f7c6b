// Deterministic mock answers: the same request always gives the same reply and token counts.
import { createHash } from 'node:crypto';

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

/** Rough token count the mock reports: one token per 4 characters, at least 1. */
export function mockTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String((p as { text: unknown }).text) : '')).join(' ');
  }
  return '';
}

export function promptText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  return (messages as ChatMessage[]).map((m) => `${String(m.role)}: ${textOf(m.content)}`).join('\n');
}

/** The reply as pieces (one per output token), cut at maxTokens. */
export function mockReply(model: string, messages: unknown, maxTokens: number | undefined): { pieces: string[]; truncated: boolean } {
  const list = Array.isArray(messages) ? (messages as ChatMessage[]) : [];
  const lastUser = [...list].reverse().find((m) => m.role === 'user');
  const said = textOf(lastUser?.content).trim().slice(0, 200);
  const text = `Hello from ${model}. You said: ${said || '(nothing)'}`;
  const pieces = text.split(/(?<= )/);
  if (maxTokens !== undefined && pieces.length > maxTokens) return { pieces: pieces.slice(0, maxTokens), truncated: true };
  return { pieces, truncated: false };
}

/** A unit-length vector derived from the text's hash. */
export function mockEmbedding(text: string, dims: number): number[] {
  const out: number[] = [];
  let block = createHash('sha256').update(text).digest();
  for (let i = 0; i < dims; i++) {
    if (i > 0 && i % 32 === 0) block = createHash('sha256').update(block).digest();
    out.push(((block[i % 32] as number) - 127.5) / 127.5);
  }
  const norm = Math.sqrt(out.reduce((s, v) => s + v * v, 0)) || 1;
  return out.map((v) => Math.round((v / norm) * 1e6) / 1e6);
}
