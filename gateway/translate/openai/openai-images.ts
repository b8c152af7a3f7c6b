// OpenAI client -> OpenAI-protocol upstream (OpenAI, Azure OpenAI), images: generations (JSON) and edits (a multipart
// form, re-encoded with the upstream's model name): a pass-through, streamed or not (the GPT image models' SSE events
// image_generation.partial_image / image_generation.completed, image_edit.* for edits, go through as they come).
// Usage: for a route priced per image, the images that came back (the answer's data, or its completed events) and
// the size and quality the answer says it made; for a route priced by tokens, the usage the upstream reports
// (input_tokens, of which input_tokens_details.image_tokens, and output_tokens). Both count the images returned
// (Usage.images: the usage event's unit 'images').
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import type { SseEvent } from '../../sse/parser.ts';
import { encodeForm, type EncodedForm, type FormFile } from '../multipart-encode.ts';
import { openAIErrorMessage } from './openai-usage.ts';
import { openAIStreamError } from '../stream-errors.ts';
import { safeJson, tokenCount, type AnswerFacts, type StreamErrorCode, type StreamTranslator, type Translation, type Usage } from '../types.ts';

type Body = Record<string, unknown>;

interface ImagesUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  input_tokens_details?: { image_tokens?: unknown; text_tokens?: unknown } | null;
}

interface ImagesAnswer {
  data?: unknown;
  size?: unknown;
  quality?: unknown;
  usage?: ImagesUsage | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What an answer (or a completed event) made: its size and quality, when it says them. */
function made(a: { size?: unknown; quality?: unknown }): Pick<Usage, 'imageSize' | 'imageQuality'> {
  const size = str(a.size);
  const quality = str(a.quality);
  return { ...(size ? { imageSize: size } : {}), ...(quality ? { imageQuality: quality } : {}) };
}

/** The usage of `images` images, per image or by the tokens `u` reports. */
export function imagesUsage(images: number, u: ImagesUsage | null | undefined, perImage: boolean, answer: { size?: unknown; quality?: unknown }): Usage {
  if (perImage) return { inputTokens: 0, outputTokens: images, cacheReadTokens: 0, cacheWriteTokens: 0, images, ...made(answer) };
  const input = tokenCount(u?.input_tokens);
  const output = tokenCount(u?.output_tokens);
  const imageIn = tokenCount(u?.input_tokens_details?.image_tokens);
  const usage: Usage = { inputTokens: input ?? 0, outputTokens: output ?? 0, cacheReadTokens: 0, cacheWriteTokens: 0, images, ...made(answer) };
  if (imageIn !== null && input !== null) usage.imageInputTokens = Math.min(imageIn, input);
  if (input === null) usage.inputMissing = true;
  if (output === null) usage.outputMissing = true;
  return usage;
}

/** The usage of a whole ImagesResponse. */
function answerUsage(body: string, perImage: boolean): Usage {
  const a = (safeJson(body) ?? {}) as ImagesAnswer;
  return imagesUsage(Array.isArray(a.data) ? a.data.length : 0, a.usage, perImage, a);
}

function withoutGatewayFields(client: Body): Body {
  const { metadata: _m, ...rest } = client;
  return rest;
}

/** A whole answer carries no model: passed on as it came. */
function translation(
  op: 'images' | 'image_edits',
  n: number,
  stream: boolean,
  build: (target: CompiledTarget) => { body: string; form?: EncodedForm },
): Translation {
  // The model of the latest request built (a fallback builds its own before its answer is read).
  let perImage = false;
  return {
    dialect: 'openai',
    protocol: 'openai',
    request(target: CompiledTarget, model: CompiledModel) {
      perImage = model.imagePrices !== undefined;
      return { operation: op, stream, headers: {}, ...build(target) };
    },
    response(upstreamBody: string) {
      return { body: upstreamBody, usage: answerUsage(upstreamBody, perImage) };
    },
    stream(): StreamTranslator {
      return new ImagesStream(n, perImage);
    },
    errorMessage: openAIErrorMessage,
  };
}

/** POST /v1/images/generations to an OpenAI-protocol upstream. */
export function imagesPassThrough(client: Body, n: number): Translation {
  return translation('images', n, client.stream === true, (target) => ({
    body: JSON.stringify({ ...withoutGatewayFields(client), model: target.upstreamModel }),
  }));
}

/** The fields and files of an edit's form, as the client sent them (checked by the route). */
export interface ImageEditForm {
  fields: Record<string, string>;
  files: FormFile[];
}

/** POST /v1/images/edits to an OpenAI-protocol upstream: the form again, with the upstream's model name. */
export function imageEditsPassThrough(form: ImageEditForm, n: number): Translation {
  const { metadata: _m, ...fields } = form.fields;
  return translation('image_edits', n, fields.stream === 'true', (target) => ({
    body: '',
    form: encodeForm({ ...fields, model: target.upstreamModel }, form.files),
  }));
}

/**
 * The SSE events of an image stream, passed through; the completed events (one per image) give the usage. The
 * stream is complete once every image asked for has its completed event.
 */
export class ImagesStream implements StreamTranslator {
  complete = false;
  failed = false;
  private images = 0;
  private seen: Usage;
  private readonly n: number;
  private readonly perImage: boolean;

  constructor(n: number, perImage: boolean) {
    this.n = n;
    this.perImage = perImage;
    this.seen = imagesUsage(0, null, perImage, {});
  }

  event(ev: SseEvent): string {
    const data = ev.data;
    const type = ev.event ?? '';
    const head = ev.event === undefined ? `data: ${data}\n\n` : `event: ${ev.event}\ndata: ${data}\n\n`;
    if (type === 'error' || (data.startsWith('{"error"') && !type.endsWith('.completed'))) {
      this.complete = true;
      this.failed = true;
      return head;
    }
    if (type.endsWith('.completed') || data.includes('"type":"image_generation.completed"') || data.includes('"type":"image_edit.completed"')) {
      this.completed(data);
    }
    return head;
  }

  /** One image done: counted, and its usage (tokens are per image: summed). */
  private completed(data: string): void {
    const e = (safeJson(data) ?? {}) as ImagesAnswer;
    this.images += 1;
    const u = imagesUsage(this.images, e.usage, this.perImage, e);
    if (!this.perImage && this.images > 1) {
      const prev = this.seen;
      u.inputTokens += prev.inputTokens;
      u.outputTokens += prev.outputTokens;
      u.imageInputTokens = (u.imageInputTokens ?? 0) + (prev.imageInputTokens ?? 0);
      if (prev.inputMissing) u.inputMissing = true;
      if (prev.outputMissing) u.outputMissing = true;
    }
    this.seen = u;
    if (this.images >= this.n) this.complete = true;
  }

  finish(): string {
    return '';
  }

  usage(): Usage {
    return this.seen;
  }

  facts(): AnswerFacts {
    return { id: null, finishReasons: [] };
  }

  error(message: string, code?: StreamErrorCode): string {
    return openAIStreamError(message, code);
  }
}
