// OpenAI client (/v1/images/generations) -> Imagen's predict API (Vertex AI :predict on imagen-* models, and the
// Gemini API's), translated where the two mean the same thing and refused with a 400 naming the field where they do
// not (no stream, no URL answers, no transparent background, no WebP, no OpenAI quality or style).
// Request: instances[0].prompt, parameters.sampleCount (n), aspectRatio (from size: Imagen's five 1K sizes),
// outputOptions.mimeType and compressionQuality (output_format, output_compression). Answer: predictions[] of
// bytesBase64Encoded (an image filtered by Google's safety filter is left out, with raiFilteredReason) ->
// ImagesResponse data[].b64_json (revised_prompt: Imagen's rewritten prompt, when it says). Usage: the images that
// came back, of the size asked (Imagen reports no tokens: an Imagen route is priced per image).
import type { CompiledModel } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { geminiErrorMessage } from '../gemini/gemini-usage.ts';
import { imagesUsage } from './openai-images.ts';
import { safeJson, type StreamTranslator, type Translation, type UpstreamRequest } from '../types.ts';

type Body = Record<string, unknown>;

/** The sizes Imagen makes at its default resolution (1K), by aspect ratio (Vertex AI's Imagen 3 and 4 model pages). */
export const IMAGEN_SIZES: Readonly<Record<string, string>> = {
  '1024x1024': '1:1',
  '896x1280': '3:4',
  '1280x896': '4:3',
  '768x1408': '9:16',
  '1408x768': '16:9',
};
const DEFAULT_SIZE = '1024x1024';

interface Prediction {
  bytesBase64Encoded?: unknown;
  mimeType?: unknown;
  prompt?: unknown;
  raiFilteredReason?: unknown;
}

function refuse(param: string, message: string): never {
  throw new GatewayError('invalid_request', message, { param });
}

const open = (v: unknown): boolean => v === undefined || v === null || v === 'auto';

/** The predict body; throws the 400 of a field Imagen has no equivalent for. */
export function imagenRequest(client: Body, n: number): { body: object; size: string } {
  if (client.stream === true) refuse('stream', 'Imagen does not stream partial images: leave stream out (or false) for this model.');
  if (client.response_format === 'url') refuse('response_format', 'Imagen answers image bytes only: ask for response_format b64_json (or leave it out).');
  const size = open(client.size) ? DEFAULT_SIZE : String(client.size);
  const aspectRatio = IMAGEN_SIZES[size];
  if (aspectRatio === undefined) refuse('size', `Imagen makes ${Object.keys(IMAGEN_SIZES).join(', ')}; ${JSON.stringify(size)} is not one of them.`);
  if (!open(client.quality) && client.quality !== 'standard') refuse('quality', 'Imagen has no quality setting: leave quality out (or auto, standard).');
  if (client.style !== undefined && client.style !== null) refuse('style', 'Imagen has no style setting (a dall-e-3 field): leave style out.');
  if (client.background === 'transparent') refuse('background', 'Imagen makes opaque images only: leave background out (or opaque, auto).');
  if (client.moderation === 'low') refuse('moderation', "Imagen's safety filter is set per project, not per call: leave moderation out (or auto).");
  const format = client.output_format;
  if (format === 'webp') refuse('output_format', 'Imagen makes PNG or JPEG images: ask for output_format png or jpeg.');
  const outputOptions: Body = {};
  if (format === 'png' || format === 'jpeg') outputOptions.mimeType = `image/${format}`;
  if (typeof client.output_compression === 'number') outputOptions.compressionQuality = client.output_compression;
  const parameters: Body = { sampleCount: n, aspectRatio, ...(Object.keys(outputOptions).length > 0 ? { outputOptions } : {}) };
  return { body: { instances: [{ prompt: client.prompt }], parameters }, size };
}

/** The predict answer in OpenAI's shape; every image filtered is a 400 content_filter saying why. */
export function imagenAnswer(upstream: string, created: number): { body: Body; images: number } {
  const a = (safeJson(upstream) ?? {}) as { predictions?: Prediction[] };
  const predictions = Array.isArray(a.predictions) ? a.predictions : [];
  const made = predictions.filter((p) => typeof p.bytesBase64Encoded === 'string' && p.bytesBase64Encoded !== '');
  if (made.length === 0) {
    const reason = predictions.map((p) => p.raiFilteredReason).find((r): r is string => typeof r === 'string');
    throw new GatewayError('content_filter', `Imagen's safety filter left no image${reason ? `: ${reason}` : ''}.`);
  }
  const data = made.map((p) => ({ b64_json: p.bytesBase64Encoded as string, ...(typeof p.prompt === 'string' ? { revised_prompt: p.prompt } : {}) }));
  const mime = typeof made[0]?.mimeType === 'string' ? made[0].mimeType : 'image/png';
  const output_format = mime === 'image/jpeg' ? 'jpeg' : 'png';
  return { body: { created, data, output_format }, images: made.length };
}

export function imagenFromOpenAI(client: Body, n: number, now: () => number = Date.now): Translation {
  let size = DEFAULT_SIZE;
  let perImage = true;
  return {
    dialect: 'openai',
    protocol: 'gemini',
    request(target, model: CompiledModel): UpstreamRequest {
      // Google's other image makers (Gemini's image models) answer generateContent, not predict: not translated.
      if (!target.upstreamModel.startsWith('imagen')) {
        throw new GatewayError(
          'upstream_error',
          `This image model is routed to ${target.upstreamModel}, which is not an Imagen model; only Imagen is served on Google's APIs.`,
        );
      }
      perImage = model.imagePrices !== undefined;
      const r = imagenRequest(client, n);
      size = r.size;
      return { operation: 'images', body: JSON.stringify(r.body), stream: false, headers: {} };
    },
    response(upstreamBody: string) {
      const { body, images } = imagenAnswer(upstreamBody, Math.floor(now() / 1000));
      // The size made is the size asked (Imagen's aspect ratio at 1K), priced as such.
      return { body: JSON.stringify(body), usage: imagesUsage(images, null, perImage, { size }) };
    },
    stream(): StreamTranslator {
      throw new Error('Imagen does not stream');
    },
    errorMessage: geminiErrorMessage,
  };
}
