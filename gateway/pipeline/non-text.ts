// Tokens of the non-text parts of a prompt that its bytes do not bound: an image or a file given by URL or id is a
// few dozen bytes of body and hundreds or thousands of tokens upstream. Each is counted at the upstream's worst case
// on top of its bytes (a base64 part is thereby counted twice: a small overestimate of a hold that is released).
//
// The figures (README, Limits):
// - IMAGE_TOKENS 4,096 per image (`image_url`, `input_image`, Anthropic `image`): Anthropic scales an image to about
//   1.15 megapixels, ~1,600 tokens (w×h/750); OpenAI's high-detail tiles cost at most 85 + 170 × 8 = 1,445 (GPT-4o,
//   768×2048 after scaling), GPT-5 less, and the patch-based models at most 1,536 patches × 2.46 = 3,779 (gpt-4.1-nano).
//   (gpt-4o-mini bills images at ~33× that; a route to it sees such usage clamped, flagged and counted.)
// - FILE_TOKENS 100,000 per file or document (`file`, `input_file`, Anthropic `document`): a PDF's pages are text
//   plus a page image each; 100 pages (Anthropic's page limit) at ~1,000 tokens a page.
// - `input_audio` adds nothing: it is always inline base64, at least ~1,000 bytes per second of sound, and upstreams
//   count 10 to 20 tokens a second.
// - TOOLS_TOKENS 1,024 once when the call declares tools: Anthropic adds a tool-use system prompt of its own (313 to
//   346 tokens for Claude 4, up to ~530 for older models), which no byte of the body carries.
import type { Json } from '../translate/json-read.ts';

export const IMAGE_TOKENS = 4096;
export const FILE_TOKENS = 100_000;
export const TOOLS_TOKENS = 1024;

/** The upstream's own prompt for tool use, when the call declares any tools. */
export function toolsTokens(tools: unknown): number {
  return Array.isArray(tools) && tools.length > 0 ? TOOLS_TOKENS : 0;
}

const WORST: Record<string, number> = {
  image_url: IMAGE_TOKENS,
  input_image: IMAGE_TOKENS,
  image: IMAGE_TOKENS,
  file: FILE_TOKENS,
  input_file: FILE_TOKENS,
  document: FILE_TOKENS,
};

/**
 * The extra input tokens of the content parts found in `roots` (messages, input items, system blocks), nested ones
 * included (tool results carry images too). Bounded work: each value of the parsed body is visited once.
 */
export function nonTextTokens(...roots: unknown[]): number {
  let total = 0;
  const stack: unknown[] = [...roots];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      const o = v as Json;
      const t = o.type;
      if (typeof t === 'string' && Object.hasOwn(WORST, t)) total += WORST[t] as number;
      for (const k in o) {
        const x = o[k];
        if (x !== null && typeof x === 'object') stack.push(x);
      }
    }
  }
  return total;
}
