// A multipart/form-data body (RFC 7578) from fields and files, for an upstream that takes a form (OpenAI's image
// edits). The boundary is random and checked against the parts, so no part's bytes can end the form early.
import { randomBytes } from 'node:crypto';

export interface FormFile {
  /** The form field (image, image[], mask). */
  field: string;
  filename: string;
  contentType: string;
  data: Uint8Array;
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

export function encodeForm(fields: Readonly<Record<string, string>>, files: readonly FormFile[]): { bytes: Uint8Array; contentType: string } {
  const values = Object.entries(fields).map(([k, v]) => [k, Buffer.from(v, 'utf8')] as const);
  const boundary = boundaryFor([...values.map(([, v]) => v), ...files.map((f) => f.data)]);
  const chunks: Uint8Array[] = [];
  for (const [name, value] of values) {
    chunks.push(Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name=${quoted(name)}${CRLF}${CRLF}`), value, Buffer.from(CRLF));
  }
  for (const f of files) {
    const head = `--${boundary}${CRLF}Content-Disposition: form-data; name=${quoted(f.field)}; filename=${quoted(f.filename)}${CRLF}Content-Type: ${f.contentType}${CRLF}${CRLF}`;
    chunks.push(Buffer.from(head), f.data, Buffer.from(CRLF));
  }
  chunks.push(Buffer.from(`--${boundary}--${CRLF}`));
  return { bytes: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
