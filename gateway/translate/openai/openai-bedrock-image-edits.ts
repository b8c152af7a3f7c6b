// OpenAI client (/v1/images/edits, a multipart form) -> Bedrock InvokeModel on Amazon's image models (Titan Image
// Generator, Nova Canvas) as taskType INPAINTING: inPaintingParams.image (the image), text (the prompt) and
// maskImage (OpenAI's mask, its transparent area turned into the black area these models repaint: png-mask.ts);
// imageGenerationConfig numberOfImages (1-5) and quality (standard; hd or high as premium). These models edit inside a mask
// only, so an edit without one, like the rest they cannot do (more than one image, a stream, URL answers, a size: the
// edit keeps the image's size; JPEG or WebP output, a transparent background), is a 400 naming the field before
// admission. Answer and usage as for generations (openai-bedrock-images.ts), each image priced at the quality asked
// and the size it came back in (read from its PNG header).
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { converseErrorMessage } from '../converse/converse-usage.ts';
import type { FormFile } from '../multipart-encode.ts';
import { type ImageEditForm, imagesUsage } from './openai-images.ts';
import { isAmazonImageModel } from './openai-bedrock-images.ts';
import { editParts, madeSize, refuseCommon } from './cloud-edit-form.ts';
import { cloudMask } from './png-mask.ts';
import { safeJson, type StreamTranslator, type Translation, type UpstreamRequest } from '../types.ts';

/** Images one call makes (imageGenerationConfig.numberOfImages). */
export const BEDROCK_EDIT_N_MAX = 5;
/** OpenAI's edit qualities: standard, and the dearest of each family (dall-e-3's hd, the GPT image models' high). */
const QUALITY: Readonly<Record<string, string>> = { standard: 'standard', hd: 'premium', high: 'premium' };

function refuse(param: string, message: string): never {
  throw new GatewayError('invalid_request', message, { param });
}

/** Checks what the model cannot do (throws the 400) and gives the quality asked, before admission. */
export function checkBedrockEdit(fields: Record<string, string>, n: number, files: readonly FormFile[]): string {
  refuseCommon(fields, files, 'This model');
  if (!files.some((f) => f.field === 'mask')) {
    refuse('mask', "Amazon's image models on Bedrock edit inside a mask only: send a mask (a PNG whose transparent area is what to change).");
  }
  if (n > BEDROCK_EDIT_N_MAX) refuse('n', `This model makes at most ${BEDROCK_EDIT_N_MAX} images per edit: ask for n of ${BEDROCK_EDIT_N_MAX} or fewer.`);
  if (fields.output_format !== undefined && fields.output_format !== 'png') {
    refuse('output_format', 'This model makes PNG images only: ask for output_format png (or leave it out).');
  }
  const quality = fields.quality === undefined || fields.quality === 'auto' ? 'standard' : fields.quality;
  if (QUALITY[quality] === undefined) refuse('quality', 'This model takes quality standard, or hd or high (its premium).');
  return quality;
}

export function bedrockInpaintingBody(prompt: string, n: number, quality: string, image: Buffer, mask: Buffer): object {
  return {
    taskType: 'INPAINTING',
    inPaintingParams: { image: image.toString('base64'), text: prompt, maskImage: mask.toString('base64') },
    imageGenerationConfig: { numberOfImages: n, quality: QUALITY[quality] },
  };
}

export function bedrockImageEditsFromOpenAI(form: ImageEditForm, n: number, now: () => number = Date.now): Translation {
  const { fields, files } = form;
  let perImage = true;
  let quality = 'standard';
  return {
    dialect: 'openai',
    protocol: 'converse',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      if (!isAmazonImageModel(target.upstreamModel)) {
        throw new GatewayError(
          'upstream_error',
          `This image model is routed to ${target.upstreamModel} on Bedrock; only Amazon's Titan Image Generator and Nova Canvas are translated.`,
        );
      }
      perImage = model.imagePrices !== undefined;
      quality = checkBedrockEdit(fields, n, files);
      // A mask held in memory is converted now, so a mask that cannot be used is refused before admission.
      const parts = editParts(files, (bytes) => cloudMask(bytes, 0).png);
      const prompt = fields.prompt ?? '';
      return {
        operation: 'images',
        body: '',
        stream: false,
        headers: {},
        load: async () => {
          const { image, mask } = await parts.read();
          return JSON.stringify(bedrockInpaintingBody(prompt, n, quality, image.bytes, mask as Buffer));
        },
      };
    },
    response(upstreamBody: string) {
      const a = (safeJson(upstreamBody) ?? {}) as { images?: unknown; error?: unknown };
      const images = Array.isArray(a.images) ? a.images.filter((x): x is string => typeof x === 'string' && x !== '') : [];
      if (images.length === 0) {
        throw new GatewayError('content_filter', `Bedrock made no image${typeof a.error === 'string' && a.error !== '' ? `: ${a.error}` : ''}.`);
      }
      const body = { created: Math.floor(now() / 1000), data: images.map((b64_json) => ({ b64_json })), output_format: 'png' };
      return { body: JSON.stringify(body), usage: imagesUsage(images.length, null, perImage, { size: madeSize(body), quality }) };
    },
    stream(): StreamTranslator {
      throw new Error("Bedrock's image models do not stream");
    },
    errorMessage: converseErrorMessage,
  };
}
