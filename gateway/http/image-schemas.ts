// Request bodies of /v1/images/generations (OpenAI's CreateImageRequest) and the fields of /v1/images/edits
// (CreateImageEditRequest, a multipart form: its values arrive as strings and are read as OpenAI reads them). Every
// field the gateway reads or an upstream bills by is checked for type and range, so a mistake is a 400 naming it.
import { z } from 'zod';

/** OpenAI's bounds: images per call, prompt length (the GPT image models'), partial images of a stream. */
export const IMAGES_N_MAX = 10;
export const IMAGE_PROMPT_MAX = 32_000;
export const PARTIAL_IMAGES_MAX = 3;

const metadata = z.looseObject({ task_type: z.string().optional() }).nullish();
const size = z.string().regex(/^([1-9][0-9]{1,4}x[1-9][0-9]{1,4}|auto)$/, 'must be WIDTHxHEIGHT (1024x1024) or auto');
const quality = z.enum(['standard', 'hd', 'low', 'medium', 'high', 'auto']);
const common = {
  model: z.string().min(1),
  prompt: z.string().min(1).max(IMAGE_PROMPT_MAX),
  n: z.number().int().min(1).max(IMAGES_N_MAX).nullish(),
  size: size.nullish(),
  quality: quality.nullish(),
  response_format: z.enum(['url', 'b64_json']).nullish(),
  output_format: z.enum(['png', 'jpeg', 'webp']).nullish(),
  output_compression: z.number().int().min(0).max(100).nullish(),
  background: z.enum(['transparent', 'opaque', 'auto']).nullish(),
  stream: z.boolean().nullish(),
  partial_images: z.number().int().min(0).max(PARTIAL_IMAGES_MAX).nullish(),
  user: z.string().optional(),
};

export const imagesBody = z.looseObject({
  ...common,
  moderation: z.enum(['low', 'auto']).nullish(),
  style: z.enum(['vivid', 'natural']).nullish(),
  metadata,
});

/** A form value read as a number (OpenAI's forms carry "2"), left as it is when it is not one (then refused). */
const num = <T extends z.ZodType>(s: T) => z.preprocess((v) => (typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v), s);
const bool = z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean().nullish());

export const imageEditFields = z.looseObject({
  ...common,
  n: num(common.n),
  output_compression: num(common.output_compression),
  partial_images: num(common.partial_images),
  stream: bool,
  input_fidelity: z.enum(['high', 'low']).nullish(),
});

export type ImagesBody = z.infer<typeof imagesBody>;
export type ImageEditFields = z.infer<typeof imageEditFields>;
