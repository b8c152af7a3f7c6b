// The multipart form of /v1/images/edits, read with a bound: the whole form at most IMAGE_FORM_MAX_BYTES (a
// Content-Length above it is refused before a byte is read; a body that grows past it is cut), at most 16 images and
// one mask, each file checked by its first bytes to be a PNG, JPEG or WebP (the mask a PNG), whatever type the
// client named. Every refusal is a 4xx before any upstream call. A file past the spool's threshold waits in a
// temporary file (uploads/spool.ts); a refused or cut form leaves none behind, an accepted one is released by the route
// when the call ends (releaseImageForm). Only this route's scope reads multipart forms.
import type { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/catalog.ts';
import type { FormFile } from '../translate/multipart-encode.ts';
import type { HeldBytes } from '../uploads/held-bytes.ts';
import { Spool, type SpoolWriter } from '../uploads/spool.ts';

/** The largest edit form: one image of the GPT image models' 50 MB limit. */
export const IMAGE_FORM_MAX_BYTES = 50 * 1024 * 1024;
/** Images per edit (OpenAI's limit for the GPT image models). */
export const EDIT_IMAGES_MAX = 16;
const FIELDS_MAX = 32;
/** A text field's largest value: a 32,000-character prompt in UTF-8 with room to spare. */
const FIELD_MAX_BYTES = 256 * 1024;

export type ImageKind = 'png' | 'jpeg' | 'webp';
const MIME: Record<ImageKind, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** The image format a file's first bytes say it is, or null. */
export function imageKindOf(b: Uint8Array): ImageKind | null {
  const at = (i: number, s: number[]): boolean => s.every((x, j) => b[i + j] === x);
  if (at(0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (at(0, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (at(0, [0x52, 0x49, 0x46, 0x46]) && at(8, [0x57, 0x45, 0x42, 0x50])) return 'webp';
  return null;
}

export interface ImageEditUpload {
  fields: Record<string, string>;
  /** The images (field `image` or `image[]`), then the mask if any, typed by their bytes. */
  files: FormFile[];
  images: number;
  hasMask: boolean;
  /** Bytes of the whole form. */
  bytes: number;
}

const tooLarge = (): GatewayError =>
  new GatewayError('request_too_large', `The form is larger than ${IMAGE_FORM_MAX_BYTES / (1024 * 1024)} MiB, the most an image edit may upload.`);

function refuse(message: string, param?: string): GatewayError {
  return new GatewayError('invalid_request', message, param === undefined ? {} : { param });
}

/** Why a file cannot be sent (empty, not an image, a mask that is no PNG), or null. */
async function fileProblem(data: HeldBytes, field: string, filename: string, isImage: boolean): Promise<string | null> {
  if (data.length === 0) return `The file ${JSON.stringify(filename)} in ${field} is empty.`;
  const kind = imageKindOf(await data.slice(0, 16));
  if (kind === null) return `The file ${JSON.stringify(filename)} in ${field} is not a PNG, JPEG or WebP image.`;
  if (!isImage && kind !== 'png') return `The mask must be a PNG image (got ${kind}).`;
  return null;
}

/** Lets the form's files go (their temporary files deleted): the call ended, however it ended. */
export async function releaseImageForm(form: ImageEditUpload | undefined): Promise<void> {
  if (form) await Promise.all(form.files.map((f) => f.data.release()));
}

/** Reads and checks the form; rejects with the GatewayError to answer. */
export function readImageForm(req: FastifyRequest, payload: Readable, spool: Spool): Promise<ImageEditUpload> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > IMAGE_FORM_MAX_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    const images: FormFile[] = [];
    let mask: FormFile | null = null;
    let bytes = 0;
    let failed: GatewayError | null = null;
    let pending = 0;
    let ended = false;
    /** Every file's bytes kept so far (a failure lets them all go). */
    const writers: SpoolWriter[] = [];
    const kept: FormFile[] = [];
    const fail = (err: GatewayError): void => {
      if (failed) return;
      failed = err;
      payload.unpipe();
      payload.resume();
      void Promise.all([...writers.map((w) => w.discard()), ...kept.map((f) => f.data.release())]).finally(() => reject(err));
    };
    const settle = (): void => {
      if (failed || !ended || pending > 0) return;
      if (images.length === 0) return fail(refuse('The form has no image: send one or more files in the field image (or image[]).', 'image'));
      resolve({ fields, files: mask ? [...images, mask] : images, images: images.length, hasMask: mask !== null, bytes });
    };
    let bb: ReturnType<typeof Busboy>;
    try {
      bb = Busboy({
        headers: req.headers as { 'content-type': string },
        limits: {
          fields: FIELDS_MAX,
          fieldSize: FIELD_MAX_BYTES,
          files: EDIT_IMAGES_MAX + 1,
          fileSize: IMAGE_FORM_MAX_BYTES,
          parts: FIELDS_MAX + EDIT_IMAGES_MAX + 1,
        },
      });
    } catch {
      reject(refuse('The request is not a multipart form with a boundary (Content-Type: multipart/form-data; boundary=...).'));
      return;
    }
    bb.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
      if (valueTruncated) return fail(refuse(`The form field ${name} is longer than ${FIELD_MAX_BYTES} bytes.`, name));
      if (Object.hasOwn(fields, name)) return fail(refuse(`The form field ${name} is given twice.`, name));
      fields[name] = value;
    });
    bb.on('file', (field: string, stream: Readable & { truncated?: boolean }, filename: string) => {
      const isImage = field === 'image' || field === 'image[]';
      if (!isImage && field !== 'mask') {
        stream.resume();
        return fail(refuse(`The form has a file in the field ${field}; an edit takes files in image (or image[]) and mask only.`, field));
      }
      if (field === 'mask' && mask) {
        stream.resume();
        return fail(refuse('The form has more than one mask.', 'mask'));
      }
      pending += 1;
      const writer = spool.writer();
      writers.push(writer);
      stream.on('data', (c: Buffer) => {
        if (failed) return;
        const wait = writer.write(c);
        if (!wait) return;
        // The disk is behind: the part (and so the request) waits for it.
        stream.pause();
        void wait.then(() => stream.resume());
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('end', () => {
        if (failed) return;
        void writer.done().then(
          async (data) => {
            writers.splice(writers.indexOf(writer), 1);
            const param = isImage ? 'image' : 'mask';
            const problem = await fileProblem(data, field, filename, isImage);
            const kind = imageKindOf(await data.slice(0, 16)) as ImageKind;
            const inMemory = !problem && data.length <= spool.aboveBytes ? await data.whole() : null;
            pending -= 1;
            if (failed || problem) {
              await data.release();
              if (problem) fail(refuse(problem, param));
              return;
            }
            const file: FormFile = { field, filename: filename || `${field}.${kind}`, contentType: MIME[kind], data, inMemory };
            kept.push(file);
            if (isImage) images.push(file);
            else mask = file;
            settle();
          },
          (err: unknown) => fail(err instanceof GatewayError ? err : refuse('The upload could not be kept.')),
        );
      });
    });
    bb.on('filesLimit', () => fail(refuse(`The form has more than ${EDIT_IMAGES_MAX} images.`, 'image')));
    bb.on('fieldsLimit', () => fail(refuse(`The form has more than ${FIELDS_MAX} fields.`)));
    bb.on('partsLimit', () => fail(refuse('The form has too many parts.')));
    bb.on('error', () => fail(refuse('The multipart form is malformed.')));
    bb.on('finish', () => {
      ended = true;
      settle();
    });
    payload.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > IMAGE_FORM_MAX_BYTES) fail(tooLarge());
    });
    payload.on('error', () => fail(refuse('The upload was cut before the form ended.')));
    // A client that leaves mid-form: what it sent so far is let go.
    payload.on('close', () => {
      if (!payload.readableEnded) fail(refuse('The upload was cut before the form ended.'));
    });
    payload.pipe(bb);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The image edit form, read by the route scope's multipart parser. */
    imageForm?: ImageEditUpload;
  }
}

/** Registers the image edit form's parser in `scope` (an encapsulated plugin: other routes do not read forms). */
export function imageFormParser(scope: FastifyInstance, spool: Spool): void {
  scope.addContentTypeParser('multipart/form-data', async (req: FastifyRequest, payload: Readable) => {
    const form = await readImageForm(req, payload, spool);
    req.bodyBytes = form.bytes;
    req.imageForm = form;
    return form.fields;
  });
}
