// A multipart/form-data upload read from the request stream (not buffered by fastify's body limit): its text fields
// and one file part, bounded by `maxBytes` with a 413 that says the bound. The rest of an oversized body is read and
// dropped, so the client gets the answer rather than a reset connection.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { GatewayError } from '../errors/catalog.ts';

export interface Upload {
  fields: Record<string, string>;
  file: { field: string; filename: string; content: Buffer } | null;
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError('request_too_large', `The file is larger than this gateway's upload limit of ${maxBytes} bytes.`, { param: 'file' });
}

export function readUpload(stream: Readable, headers: IncomingHttpHeaders, maxBytes: number): Promise<Upload> {
  const type = headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) {
    return Promise.reject(new GatewayError('invalid_request', 'The upload must be sent as multipart/form-data with a `file` part and a `purpose` field.'));
  }
  // Headers aside, a body much larger than the bound is refused before it is read.
  const declared = Number(headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes + 1024 * 1024) {
    stream.resume();
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise((resolve, reject) => {
    const out: Upload = { fields: {}, file: null };
    let failed: GatewayError | null = null;
    let bb: BusboyInstance;
    try {
      bb = new Busboy({ headers: { ...headers, 'content-type': type }, limits: { fileSize: maxBytes, files: 1, fields: 16, fieldSize: 64 * 1024 } });
    } catch {
      reject(new GatewayError('invalid_request', 'The multipart body has no boundary in its content type.'));
      return;
    }
    bb.on('field', (name, value) => {
      out.fields[name] = value;
    });
    bb.on('file', (field, file, filename) => {
      const chunks: Buffer[] = [];
      file.on('data', (c: Buffer) => {
        if (!failed) chunks.push(c);
      });
      file.on('limit', () => {
        failed = tooLarge(maxBytes);
        chunks.length = 0;
      });
      file.on('end', () => {
        if (!failed) out.file = { field, filename: filename || 'upload.jsonl', content: Buffer.concat(chunks) };
      });
    });
    bb.on('error', () => {
      stream.resume();
      reject(failed ?? new GatewayError('invalid_request', 'The multipart body is malformed.'));
    });
    bb.on('finish', () => (failed ? reject(failed) : resolve(out)));
    stream.pipe(bb);
  });
}
