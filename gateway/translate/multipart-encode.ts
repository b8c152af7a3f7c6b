// A multipart/form-data body (RFC 7578) from fields and files, for an upstream that takes a form (OpenAI's image
// edits), streamed part by part (a large file is read from its temporary file as it is sent, never joined). The
// boundary is random and drawn after the upload arrived; it is checked against the parts held in memory, so no part's
// bytes can end the form early (a spooled file would match a fresh 128-bit boundary by chance alone).
import { randomBytes } from 'node:crypto';
import type { HeldBytes } from '../uploads/held-bytes.ts';

export interface FormFile {
  /** The form field (image, image[], mask). */
  field: string;
  filename: string;
  contentType: string;
  data: HeldBytes;
  /** The bytes when they are in memory (small files), for the boundary check. */
  inMemory: Buffer | null;
}

/** A form ready to send: its length up front, a fresh read of its parts per attempt. */
export interface EncodedForm {
  contentType: string;
  length: number;
  body: () => AsyncIterable<Uint8Array>;
}

const CRLF = '\r\n';

/** A header value as a quoted-string: quotes, backslashes and line breaks escaped the way browsers do. */
function quoted(v: string): string {
  return `"${v.replace(/\\/g, '\\\\').replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;
}

function boundaryFor(parts: readonly Uint8Array[]): string {
  for (;;) {
    const b = `----svc-gateway-${randomBytes(16).toString('hex')}`;
    const needle = Buffer.from(b);
    if (!parts.some((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength).includes(needle))) return b;
  }
}

type Piece = Uint8Array | HeldBytes;

export function encodeForm(fields: Readonly<Record<string, string>>, files: readonly FormFile[]): EncodedForm {
  const values = Object.entries(fields).map(([k, v]) => [k, Buffer.from(v, 'utf8')] as const);
  const held = files.flatMap((f) => (f.inMemory ? [f.inMemory] : []));
  const boundary = boundaryFor([...values.map(([, v]) => v), ...held]);
  const pieces: Piece[] = [];
  for (const [name, value] of values) {
    pieces.push(Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name=${quoted(name)}${CRLF}${CRLF}`), value, Buffer.from(CRLF));
  }
  for (const f of files) {
    const head = `--${boundary}${CRLF}Content-Disposition: form-data; name=${quoted(f.field)}; filename=${quoted(f.filename)}${CRLF}Content-Type: ${f.contentType}${CRLF}${CRLF}`;
    pieces.push(Buffer.from(head), f.inMemory ?? f.data, Buffer.from(CRLF));
  }
  pieces.push(Buffer.from(`--${boundary}--${CRLF}`));
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: pieces.reduce((n, p) => n + p.length, 0),
    body: async function* parts() {
      for (const p of pieces) {
        if (p instanceof Uint8Array) yield p;
        else yield* p.stream();
      }
    },
  };
}

/** The whole form in memory (tests, and upstreams that need the bytes at once). */
export async function formBytes(form: EncodedForm): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const c of form.body()) chunks.push(c);
  return Buffer.concat(chunks);
}
