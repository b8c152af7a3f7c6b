// The money of an image model (ModelRoute type image), two ways:
// - per image (spec.pricing.perImage: dall-e-3, Imagen, Bedrock image models): a price by size and quality; the
//   output count is images. The hold is n images at the dearest price the asked size and quality may cost (size or
//   quality absent or auto: the dearest the table lists for what is left open); the charge is the images that came
//   back at the price of what was asked, what it left open read from the answer (its size, quality) when it says.
// - by tokens (no table: gpt-image-1 and later report usage): text input, image input (the images of an edit) and
//   output image tokens, each at its price. The hold is the input bound at the dearer input price plus the route's
//   maxOutputTokens per image.
// A size the model does not serve (not in its table, or not in spec.imageSizes) is refused before admission.
import type { CompiledModel } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { MAX_AMOUNT } from '../state/store.ts';
import type { Usage } from '../translate/types.ts';

/** What an image call asks for, read from its request. */
export interface ImageDemand {
  /** Images asked for (`n`, default 1). */
  n: number;
  /** `size` as asked; null: absent. */
  size: string | null;
  /** `quality` as asked; null: absent. */
  quality: string | null;
}

/** Open: the request leaves it to the upstream (absent or auto), so every listed value may apply. */
const open = (v: string | null | undefined): boolean => v === null || v === undefined || v === 'auto';

/**
 * The per-image prices that may apply to a call of this size and quality: a quality asked for takes the entries that
 * name it, else the size's entries without a quality (any quality); a quality left open takes them all.
 */
function matching(m: CompiledModel, size: string | null, quality: string | null): number[] {
  const sized = (m.imagePrices ?? []).filter((p) => open(size) || p.size === size);
  if (open(quality)) return sized.map((p) => p.nano);
  const named = sized.filter((p) => p.quality === quality);
  return (named.length > 0 ? named : sized.filter((p) => p.quality === null)).map((p) => p.nano);
}

/** Why model `m` cannot serve this call (its size or quality), or null when it can. */
export function imageRefusal(m: CompiledModel, d: ImageDemand): { param: string; message: string } | null {
  if (m.imagePrices) {
    const sizes = [...new Set(m.imagePrices.map((p) => p.size))];
    if (!open(d.size) && !sizes.includes(d.size as string)) {
      return { param: 'size', message: `The model ${m.id} does not serve size ${JSON.stringify(d.size)}; it serves ${sizes.join(', ')}.` };
    }
    if (matching(m, d.size, d.quality).length === 0) {
      const qualities = [...new Set(m.imagePrices.filter((p) => open(d.size) || p.size === d.size).map((p) => p.quality ?? 'any'))];
      return {
        param: 'quality',
        message: `The model ${m.id} does not serve quality ${JSON.stringify(d.quality)}${open(d.size) ? '' : ` at size ${d.size}`}; it serves ${qualities.join(', ')}.`,
      };
    }
    return null;
  }
  if (m.imageSizes && !open(d.size) && !m.imageSizes.includes(d.size as string)) {
    return { param: 'size', message: `The model ${m.id} does not serve size ${JSON.stringify(d.size)}; it serves ${m.imageSizes.join(', ')}.` };
  }
  return null;
}

/**
 * The chain an image call may use: the models that serve its size and quality. The requested model must (else a 400
 * naming the sizes it serves); a fallback that does not is left out.
 */
export function imageChain(chain: readonly CompiledModel[], d: ImageDemand): CompiledModel[] {
  const head = chain[0];
  const refusal = head ? imageRefusal(head, d) : null;
  if (refusal) throw new GatewayError('invalid_request', refusal.message, { param: refusal.param });
  return chain.filter((m) => imageRefusal(m, d) === null);
}

/** The dearest price per image of this size and quality on `m` (0 when the table lists none that applies). */
export function imageUnitNano(m: CompiledModel, size: string | null, quality: string | null): number {
  let max = 0;
  for (const nano of matching(m, size, quality)) if (nano > max) max = nano;
  return max;
}

/** The output count's unit price on `m` for this demand: an image's, or an output token's. */
export function imageOutputNano(m: CompiledModel, d: ImageDemand): number {
  return m.imagePrices ? imageUnitNano(m, d.size, d.quality) : m.outputNanoPerToken;
}

/** The dearer of the input prices (the hold does not know how many input tokens are text or image). */
export function imageInputNanoMax(m: CompiledModel): number {
  return Math.max(m.inputNanoPerToken, m.imageInputNanoPerToken ?? m.inputNanoPerToken);
}

/**
 * The cost of a served image call on `m`: `charged` is the usage bounded by the hold's bounds (bound-usage.ts);
 * `reported` carries what the answer says beyond counts (its size and quality, its image input tokens).
 */
export function imageCostNano(m: CompiledModel, charged: Usage, reported: Usage, d: ImageDemand): number {
  const imageIn = Math.min(reported.imageInputTokens ?? 0, charged.inputTokens);
  const input = (charged.inputTokens - imageIn) * m.inputNanoPerToken + imageIn * (m.imageInputNanoPerToken ?? m.inputNanoPerToken);
  if (!m.imagePrices) return Math.min(input + charged.outputTokens * m.outputNanoPerToken, MAX_AMOUNT);
  // What the call asked for; what it left open (absent, auto) is read from the answer when it names a priced value.
  const size = open(d.size) && !open(reported.imageSize) ? (reported.imageSize as string) : d.size;
  const quality = open(d.quality) && !open(reported.imageQuality) ? (reported.imageQuality as string) : d.quality;
  const unit = matching(m, size, quality).length > 0 ? imageUnitNano(m, size, quality) : imageUnitNano(m, d.size, d.quality);
  return Math.min(input + charged.outputTokens * unit, MAX_AMOUNT);
}
