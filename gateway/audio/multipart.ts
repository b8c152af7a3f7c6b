// The upstream request of a transcription or translation: multipart/form-data made of the client's fields (model
// replaced by the target's) and the upload's kept bytes, streamed from where they are kept (memory or a temporary
// file) without joining them, its length known up front.
import { randomBytes } from 'node:crypto';
import type { UploadedFile } from './upload.ts';

export interface MultipartBody {
  contentType: string;
  length: number;
  /** A fresh iteration over the parts (each attempt of a fallback sends the body again). */
  body: () => AsyncIterable<Uint8Array>;
}

/** Quotes and line breaks in a part's name or filename, escaped as browsers do (WHATWG form encoding). */
const escape = (s: string): string => s.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

export function multipartBody(fields: ReadonlyArray<readonly [string, string]>, file: UploadedFile, filename: string, mime: string): MultipartBody {
  const boundary = `svc-gateway-${randomBytes(16).toString('hex')}`;
  let head = '';
  for (const [name, value] of fields) head += `--${boundary}\r\ncontent-disposition: form-data; name="${escape(name)}"\r\n\r\n${value}\r\n`;
  head += `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${escape(filename)}"\r\ncontent-type: ${mime}\r\n\r\n`;
  const first = Buffer.from(head, 'utf8');
  const last = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: first.length + file.bytes + last.length,
    body: async function* parts() {
      yield first;
      yield* file.data.stream();
      yield last;
    },
  };
}
