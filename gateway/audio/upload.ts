// Reads a multipart/form-data upload (OpenAI's audio endpoints) as it arrives, with bounds: the file part kept once
// (in memory as the chunks it came in while small, in a temporary file past the spool's threshold: uploads/spool.ts),
// its size capped (413 once it passes the cap, the rest of the request read and dropped so the client sees the
// answer), small text fields, one file. A refused or cut upload leaves no file behind; an accepted one is the caller's
// to release. Nothing here knows HTTP frameworks: it takes the request stream and its headers.
import type { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { GatewayError } from '../errors/catalog.ts';
import type { HeldBytes } from '../uploads/held-bytes.ts';
import { Spool, type SpoolWriter } from '../uploads/spool.ts';

/** OpenAI's limit on an audio upload: 25 MB. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** Bytes of a request beyond which the gateway stops reading it and closes the connection (a client sending forever). */
const MAX_REQUEST_BYTES = 4 * MAX_AUDIO_BYTES;

export interface UploadedFile {
  /** The file's bytes (one copy, kept for the upstream request and any fallback; released when the call ends). */
  data: HeldBytes;
  bytes: number;
  filename: string;
}

export interface AudioUpload {
  /** The text fields in the order they came (repeated names, `include[]`, `timestamp_granularities[]`, kept). */
  fields: Array<[string, string]>;
  file: UploadedFile;
}

export interface UploadLimits {
  maxFileBytes: number;
}

const TOO_LARGE = (max: number): GatewayError =>
  new GatewayError('request_too_large', `The audio file is larger than ${Math.floor(max / (1024 * 1024))} MB, the most the endpoint takes.`, {
    param: 'file',
  });

/** The request's content type is multipart/form-data with a boundary, or a 400 saying what the endpoint takes. */
export function checkMultipart(contentType: string | undefined): string {
  const ct = contentType ?? '';
  if (!/^multipart\/form-data\s*;/i.test(ct) || !/boundary=/i.test(ct)) {
    throw new GatewayError(
      'invalid_request',
      `This endpoint takes multipart/form-data (a file part and the fields), not ${ct === '' ? 'a body without a content type' : ct.split(';')[0]}.`,
    );
  }
  return ct;
}

export async function readUpload(
  stream: Readable,
  contentType: string | undefined,
  limits: UploadLimits = { maxFileBytes: MAX_AUDIO_BYTES },
  spool: Spool = new Spool(),
): Promise<AudioUpload> {
  const ct = checkMultipart(contentType);
  return new Promise((resolve, reject) => {
    let bb: BusboyInstance;
    try {
      bb = new Busboy({
        headers: { 'content-type': ct },
        // `file` is the file whether or not its part names a filename; any other part is a text field.
        isPartAFile: (name) => name === 'file',
        limits: { fileSize: limits.maxFileBytes, files: 1, fields: 64, fieldSize: 64 * 1024, parts: 80, headerPairs: 32 },
      });
    } catch {
      reject(new GatewayError('invalid_request', 'The multipart/form-data body has no usable boundary.'));
      return;
    }
    const fields: Array<[string, string]> = [];
    let file: { writer: SpoolWriter; bytes: number; filename: string } | null = null;
    let refusal: GatewayError | null = null;
    let read = 0;
    let settled = false;
    const refuse = (e: GatewayError): void => {
      refusal ??= e;
    };
    const fail = async (e: GatewayError): Promise<void> => {
      await file?.writer.discard();
      reject(e);
    };
    const finish = (): void => {
      if (settled) return;
      settled = true;
      stream.off('data', count);
      stream.off('close', cut);
      if (refusal) void fail(refusal);
      else if (!file || file.bytes === 0)
        void fail(new GatewayError('invalid_request', "The request has no audio: send it in a part named 'file'.", { param: 'file' }));
      else {
        const f = file;
        f.writer.done().then(
          (data) => resolve({ fields, file: { data, bytes: f.bytes, filename: f.filename } }),
          (e: unknown) => void fail(e instanceof GatewayError ? e : new GatewayError('internal_error', 'The upload could not be kept.')),
        );
      }
    };
    const count = (c: Buffer): void => {
      read += c.length;
      if (read > MAX_REQUEST_BYTES && !settled) {
        // Past any cap a real client needs: answered now, the connection closed by the route.
        refuse(TOO_LARGE(limits.maxFileBytes));
        stream.unpipe(bb);
        finish();
      }
    };
    stream.on('data', count);
    bb.on('file', (_name, part, filename) => {
      const f = { writer: spool.writer(), bytes: 0, filename: filename ?? 'audio' };
      file = f;
      part.on('data', (c: Buffer) => {
        if (refusal) return;
        f.bytes += c.length;
        const wait = f.writer.write(c);
        if (!wait) return;
        // The disk is behind: the part (and so the request) waits for it.
        part.pause();
        void wait.then(() => part.resume());
      });
      part.on('limit', () => {
        refuse(TOO_LARGE(limits.maxFileBytes));
        // The bytes kept so far are let go now; the rest of the part is read and dropped by the parser.
        void f.writer.discard();
      });
    });
    bb.on('field', (name: string, value: string, _nameCut: boolean, valueCut: boolean) => {
      if (valueCut) refuse(new GatewayError('invalid_request', `The field ${name} is longer than 65536 bytes.`, { param: name }));
      else fields.push([name, value]);
    });
    bb.on('filesLimit', () => refuse(new GatewayError('invalid_request', 'The request carries more than one file; send one audio file.', { param: 'file' })));
    bb.on('fieldsLimit', () => refuse(new GatewayError('invalid_request', 'The request carries too many fields.')));
    bb.on('partsLimit', () => refuse(new GatewayError('invalid_request', 'The request carries too many parts.')));
    bb.on('error', (err: Error) => {
      refuse(new GatewayError('invalid_request', `The multipart/form-data body cannot be read: ${err.message}.`));
      finish();
    });
    bb.on('finish', finish);
    // A client that leaves mid-upload: its bytes so far are dropped (the file deleted), nothing answered.
    const cut = (): void => {
      if (stream.readableEnded) return;
      refuse(new GatewayError('invalid_request', 'The upload was cut off before its end.'));
      finish();
    };
    stream.on('error', cut);
    stream.on('close', cut);
    stream.pipe(bb);
  });
}
