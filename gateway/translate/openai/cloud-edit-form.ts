// What the clouds' image edits (Imagen on Vertex AI, Amazon's models on Bedrock) share when they take OpenAI's edit
// form: one image and an optional mask carried as base64 inside a JSON body, no stream, no URL answers, the output the
// size of the input. The checks that need no bytes run before admission; a mask held in memory is converted then
// too, a larger one (in a temporary file) when the body is made.
import { GatewayError } from '../../errors/catalog.ts';
import type { FormFile } from '../multipart-encode.ts';
import { pngSize } from './png-mask.ts';

function refuse(param: string, message: string): never {
  throw new GatewayError('invalid_request', message, { param });
}

const set = (v: string | undefined): boolean => v !== undefined && v !== '' && v !== 'auto';

/** The fields and files no cloud edit can carry: a 400 naming the field. */
export function refuseCommon(fields: Record<string, string>, files: readonly FormFile[], who: string): void {
  if (fields.stream === 'true') refuse('stream', `${who} does not stream partial images: leave stream out (or false) for this model.`);
  if (fields.response_format === 'url') refuse('response_format', `${who} answers image bytes only: ask for response_format b64_json (or leave it out).`);
  if (files.filter((f) => f.field !== 'mask').length > 1) refuse('image', `${who} edits one image per call: send a single image.`);
  if (set(fields.size)) refuse('size', `${who}'s edit keeps the size of the image sent: leave size out (or auto).`);
  if (fields.background === 'transparent') refuse('background', `${who} makes opaque images only: leave background out (or opaque, auto).`);
  if (fields.input_fidelity !== undefined) refuse('input_fidelity', `${who} has no input fidelity setting (a GPT image model field): leave it out.`);
}

export interface EditBytes {
  image: { bytes: Buffer; type: string };
  /** The mask in the cloud's form, when the form has one. */
  mask: Buffer | null;
}

/** The image and the converted mask, read when the body is made (a mask in memory converted at once). */
export function editParts(files: readonly FormFile[], convert: (mask: Buffer) => Buffer): { read: () => Promise<EditBytes> } {
  const image = files.find((f) => f.field !== 'mask') as FormFile;
  const mask = files.find((f) => f.field === 'mask');
  const early = mask?.inMemory ? convert(mask.inMemory) : null;
  return {
    async read() {
      const bytes = image.inMemory ?? (await image.data.whole());
      const converted = early ?? (mask ? convert(await mask.data.whole()) : null);
      return { image: { bytes, type: image.contentType }, mask: converted };
    },
  };
}

/** The size of the first image of an ImagesResponse (WIDTHxHEIGHT from its PNG header), when it is a PNG. */
export function madeSize(body: { data?: unknown }): string | undefined {
  const first = Array.isArray(body.data) ? (body.data[0] as { b64_json?: unknown } | undefined) : undefined;
  if (typeof first?.b64_json !== 'string') return undefined;
  const size = pngSize(Buffer.from(first.b64_json.slice(0, 44), 'base64'));
  return size ? `${size.width}x${size.height}` : undefined;
}
