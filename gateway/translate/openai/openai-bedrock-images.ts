// OpenAI client (/v1/images/generations) -> Bedrock InvokeModel on Amazon's image models (Titan Image Generator,
// Nova Canvas), which share one request shape: taskType TEXT_IMAGE, textToImageParams.text, imageGenerationConfig
// (numberOfImages, width, height, quality standard or premium). Translated where the two mean the same thing and
// refused with a 400 naming the field where they do not (no stream, no URL answers, no transparent background, PNG
// only, no style). OpenAI's quality `standard` is Bedrock's `standard`, `hd` its `premium`. Answer: images[] (base64
// PNG) -> ImagesResponse data[].b64_json. Usage: the images that came back, of the size and quality asked (Bedrock
// reports no tokens for these models: a route to them is priced per image).
import type { CompiledModel } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { converseErrorMessage } from '../converse/converse-usage.ts';
import { imagesUsage } from './openai-images.ts';
import { safeJson, type StreamTranslator, type Translation, type UpstreamRequest } from '../types.ts';

type Body = Record<string, unknown>;

const DEFAULT_SIZE = '1024x1024';
const QUALITY: Readonly<Record<string, string>> = { standard: 'standard', hd: 'premium' };

/** Amazon's image models on Bedrock (a foundation model id, an inference profile, or an ARN naming one). */
export function isAmazonImageModel(modelId: string): boolean {
  return /(?:^|[./:])amazon\.(titan-image-generator|nova-canvas)/.test(modelId);
}

function refuse(param: string, message: string): never {
  throw new GatewayError('invalid_request', message, { param });
}

const open = (v: unknown): boolean => v === undefined || v === null || v === 'auto';

export function bedrockImageRequest(client: Body, n: number): { body: object; size: string; quality: string } {
  if (client.stream === true) refuse('stream', "Bedrock's image models do not stream partial images: leave stream out (or false).");
  if (client.response_format === 'url') refuse('response_format', "Bedrock's image models answer image bytes only: ask for response_format b64_json.");
  if (client.style !== undefined && client.style !== null) refuse('style', 'This model has no style setting (a dall-e-3 field): leave style out.');
  if (client.background === 'transparent') refuse('background', 'This model makes opaque images only: leave background out (or opaque, auto).');
  if (client.output_format !== undefined && client.output_format !== null && client.output_format !== 'png') {
    refuse('output_format', 'This model makes PNG images only: ask for output_format png (or leave it out).');
  }
  const quality = open(client.quality) ? 'standard' : String(client.quality);
  const bedrockQuality = QUALITY[quality];
  if (bedrockQuality === undefined) refuse('quality', 'This model takes quality standard or hd (its premium).');
  const size = open(client.size) ? DEFAULT_SIZE : String(client.size);
  const [width, height] = size.split('x').map(Number);
  const body = {
    taskType: 'TEXT_IMAGE',
    textToImageParams: { text: client.prompt },
    imageGenerationConfig: { numberOfImages: n, width, height, quality: bedrockQuality },
  };
  return { body, size, quality };
}

export function bedrockImagesFromOpenAI(client: Body, n: number, now: () => number = Date.now): Translation {
  let made = { size: DEFAULT_SIZE, quality: 'standard' };
  let perImage = true;
  return {
    dialect: 'openai',
    protocol: 'converse',
    request(target, model: CompiledModel): UpstreamRequest {
      if (!isAmazonImageModel(target.upstreamModel)) {
        throw new GatewayError(
          'upstream_error',
          `This image model is routed to ${target.upstreamModel} on Bedrock; only Amazon's Titan Image Generator and Nova Canvas are translated.`,
        );
      }
      perImage = model.imagePrices !== undefined;
      const r = bedrockImageRequest(client, n);
      made = { size: r.size, quality: r.quality };
      return { operation: 'images', body: JSON.stringify(r.body), stream: false, headers: {} };
    },
    response(upstreamBody: string) {
      const a = (safeJson(upstreamBody) ?? {}) as { images?: unknown; error?: unknown };
      const images = Array.isArray(a.images) ? a.images.filter((x): x is string => typeof x === 'string' && x !== '') : [];
      if (images.length === 0) {
        throw new GatewayError('content_filter', `Bedrock made no image${typeof a.error === 'string' && a.error !== '' ? `: ${a.error}` : ''}.`);
      }
      const body = { created: Math.floor(now() / 1000), data: images.map((b64_json) => ({ b64_json })), output_format: 'png' };
      return { body: JSON.stringify(body), usage: imagesUsage(images.length, null, perImage, made) };
    },
    stream(): StreamTranslator {
      throw new Error("Bedrock's image models do not stream");
    },
    errorMessage: converseErrorMessage,
  };
}
