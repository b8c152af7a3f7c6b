// The mock provider's images: a small valid PNG (8x8, one colour) for each image asked for, in OpenAI's wire format
// (ImagesResponse, or the image_generation.* / image_edit.* events of a stream, with partial images), with the usage
// the GPT image models report. It keeps no images to serve by URL: response_format url is refused with a 400 that
// says so.
import { deflateSync, crc32 } from 'node:zlib';
import type { UpstreamOutcome } from '../types.ts';
import { mockTokens } from './reply.ts';

/** Output tokens gpt-image-1 bills for a low-quality square image: the mock's count per image. */
export const MOCK_IMAGE_TOKENS = 272;
/** Input tokens the mock counts per input image of an edit. */
export const MOCK_INPUT_IMAGE_TOKENS = 194;

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** An 8x8 RGB PNG of one colour. */
function png(r: number, g: number, b: number): string {
  const side = 8;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: side }, () => [r, g, b]).flat())]);
  const raw = Buffer.concat(Array.from({ length: side }, () => row));
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]).toString('base64');
}

export const MOCK_PNG_B64 = png(0x2b, 0x6c, 0xb0);
const PARTIAL_PNG_B64 = png(0xb0, 0xb0, 0xb0);

export interface MockImageRequest {
  prompt: string;
  n: number;
  size: string | null;
  quality: string | null;
  responseFormat: string | null;
  stream: boolean;
  partialImages: number;
  inputImages: number;
}

function refusal(message: string): UpstreamOutcome {
  return {
    kind: 'error',
    status: 400,
    body: JSON.stringify({ error: { message, type: 'invalid_request_error', param: 'response_format', code: null } }),
    retryAfter: undefined,
  };
}

export function mockImages(req: MockImageRequest, edit: boolean): UpstreamOutcome {
  if (req.responseFormat === 'url') return refusal('The mock provider keeps no images to serve by URL: ask for response_format b64_json.');
  const created = Math.floor(Date.now() / 1000);
  const size = req.size && req.size !== 'auto' ? req.size : '1024x1024';
  const quality = req.quality && req.quality !== 'auto' ? req.quality : 'low';
  const text = mockTokens(req.prompt);
  const imageIn = req.inputImages * MOCK_INPUT_IMAGE_TOKENS;
  const usage = (images: number): object => ({
    input_tokens: text + imageIn,
    input_tokens_details: { text_tokens: text, image_tokens: imageIn },
    output_tokens: images * MOCK_IMAGE_TOKENS,
    total_tokens: text + imageIn + images * MOCK_IMAGE_TOKENS,
  });
  const made = { background: 'opaque', output_format: 'png', quality, size };
  if (!req.stream) {
    const data = Array.from({ length: req.n }, () => ({ b64_json: MOCK_PNG_B64 }));
    return { kind: 'json', status: 200, body: JSON.stringify({ created, data, ...made, usage: usage(req.n) }) };
  }
  const prefix = edit ? 'image_edit' : 'image_generation';
  const events: string[] = [];
  const frame = (type: string, e: object): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...e })}\n\n`;
  for (let i = 0; i < req.n; i++) {
    for (let p = 0; p < req.partialImages; p++) {
      events.push(frame(`${prefix}.partial_image`, { b64_json: PARTIAL_PNG_B64, created_at: created, ...made, partial_image_index: p }));
    }
    events.push(frame(`${prefix}.completed`, { b64_json: MOCK_PNG_B64, created_at: created, ...made, usage: usage(1) }));
  }
  return { kind: 'stream', status: 200, body: toIterable(events) };
}

async function* toIterable(events: string[]): AsyncGenerator<string> {
  for (const e of events) yield e;
}

/** The fields of an edit's form the mock reads (it reads no file: it counts them). */
export function mockEditRequest(form: Uint8Array): MockImageRequest {
  const text = Buffer.from(form).toString('latin1');
  const field = (name: string): string | null => new RegExp(`name="${name.replace(/[[\]]/g, '\\$&')}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(text)?.[1] ?? null;
  const files = text.match(/; filename="/g)?.length ?? 0;
  return {
    prompt: Buffer.from(field('prompt') ?? '', 'latin1').toString('utf8'),
    n: Number(field('n') ?? 1),
    size: field('size'),
    quality: field('quality'),
    responseFormat: field('response_format'),
    stream: field('stream') === 'true',
    partialImages: Number(field('partial_images') ?? 0),
    inputImages: files,
  };
}
