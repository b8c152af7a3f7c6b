// OpenAI client (/v1/images/edits, a multipart form) -> Imagen's editing on Vertex AI (:predict on
// imagen-3.0-capability-001 and later capability models). The image is the REFERENCE_TYPE_RAW reference; a mask becomes
// a REFERENCE_TYPE_MASK reference (MASK_MODE_USER_PROVIDED) with editMode EDIT_MODE_INPAINT_INSERTION, its transparent
// area turned into the white area Imagen edits (png-mask.ts); without a mask the whole image is edited by the prompt
// (EDIT_MODE_DEFAULT, Imagen's mask-free editing). n is sampleCount (1-4). What Imagen cannot do is a 400 naming the
// field before admission: more than one image, a stream, URL answers, a size (the edit keeps the image's size), a
// quality, a transparent background, WebP, the Gemini API (editing is Vertex AI's only). Answer and usage as for
// generations (openai-imagen.ts), each image priced at the size it came back in (read from its PNG header).
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { geminiErrorMessage } from '../gemini/gemini-usage.ts';
import type { FormFile } from '../multipart-encode.ts';
import { type ImageEditForm, imagesUsage } from './openai-images.ts';
import { imagenAnswer } from './openai-imagen.ts';
import { editParts, madeSize, refuseCommon } from './cloud-edit-form.ts';
import { cloudMask } from './png-mask.ts';
import type { StreamTranslator, Translation, UpstreamRequest } from '../types.ts';

/** Images one Imagen call makes (Vertex AI's sampleCount). */
export const IMAGEN_EDIT_N_MAX = 4;

function refuse(param: string, message: string): never {
  throw new GatewayError('invalid_request', message, { param });
}

/** The predict body of an edit, from the image's and the (converted) mask's bytes. */
export function imagenEditBody(fields: Record<string, string>, n: number, image: { bytes: Buffer; type: string }, mask: Buffer | null): object {
  const referenceImages: object[] = [
    { referenceType: 'REFERENCE_TYPE_RAW', referenceId: 1, referenceImage: { bytesBase64Encoded: image.bytes.toString('base64'), mimeType: image.type } },
  ];
  if (mask) {
    referenceImages.push({
      referenceType: 'REFERENCE_TYPE_MASK',
      referenceId: 2,
      referenceImage: { bytesBase64Encoded: mask.toString('base64'), mimeType: 'image/png' },
      maskImageConfig: { maskMode: 'MASK_MODE_USER_PROVIDED' },
    });
  }
  const outputOptions: Record<string, unknown> = {};
  if (fields.output_format === 'png' || fields.output_format === 'jpeg') outputOptions.mimeType = `image/${fields.output_format}`;
  if (fields.output_compression !== undefined) outputOptions.compressionQuality = Number(fields.output_compression);
  const parameters = {
    editMode: mask ? 'EDIT_MODE_INPAINT_INSERTION' : 'EDIT_MODE_DEFAULT',
    sampleCount: n,
    ...(Object.keys(outputOptions).length > 0 ? { outputOptions } : {}),
  };
  return { instances: [{ prompt: fields.prompt, referenceImages }], parameters };
}

/** Checks the fields Imagen's editing has no equivalent for (throws the 400), before admission. */
export function checkImagenEdit(fields: Record<string, string>, n: number, files: readonly FormFile[]): void {
  refuseCommon(fields, files, 'Imagen');
  if (n > IMAGEN_EDIT_N_MAX) refuse('n', `Imagen makes at most ${IMAGEN_EDIT_N_MAX} images per edit: ask for n of ${IMAGEN_EDIT_N_MAX} or fewer.`);
  if (fields.quality !== undefined && fields.quality !== 'auto' && fields.quality !== 'standard') {
    refuse('quality', 'Imagen has no quality setting: leave quality out (or auto, standard).');
  }
  if (fields.output_format === 'webp') refuse('output_format', 'Imagen makes PNG or JPEG images: ask for output_format png or jpeg.');
}

export function imagenEditsFromOpenAI(form: ImageEditForm, n: number, now: () => number = Date.now): Translation {
  const { fields, files } = form;
  let perImage = true;
  return {
    dialect: 'openai',
    protocol: 'gemini',
    request(target: CompiledTarget, model: CompiledModel): UpstreamRequest {
      if (target.provider !== 'vertex') {
        refuse('model', "Imagen's editing is served on Vertex AI only; this model is routed to the Gemini API, which makes images but does not edit them.");
      }
      if (!target.upstreamModel.startsWith('imagen')) {
        throw new GatewayError(
          'upstream_error',
          `This image model is routed to ${target.upstreamModel}, which is not an Imagen model; only Imagen edits on Google's APIs.`,
        );
      }
      perImage = model.imagePrices !== undefined;
      checkImagenEdit(fields, n, files);
      // A mask held in memory is converted now, so a mask that cannot be used is refused before admission.
      const parts = editParts(files, (bytes) => cloudMask(bytes, 255).png);
      return {
        operation: 'images',
        body: '',
        stream: false,
        headers: {},
        load: async () => {
          const { image, mask } = await parts.read();
          return JSON.stringify(imagenEditBody(fields, n, image, mask));
        },
      };
    },
    response(upstreamBody: string) {
      const { body, images } = imagenAnswer(upstreamBody, Math.floor(now() / 1000));
      return { body: JSON.stringify(body), usage: imagesUsage(images, null, perImage, { size: madeSize(body) }) };
    },
    stream(): StreamTranslator {
      throw new Error('Imagen does not stream');
    },
    errorMessage: geminiErrorMessage,
  };
}
