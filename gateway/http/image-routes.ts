// The image endpoints: /v1/images/generations (JSON) and /v1/images/edits (a multipart form, read by this scope's
// own parser with its bound: multipart-images.ts). Thin routes over the same pipeline as chat: the same keys, limits,
// holds, settlement and usage events; a size or quality the model does not serve is refused before admission
// (pipeline/image-price.ts). Answers are never cached (an image is a new sample each time).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/catalog.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import type { ImageDemand } from '../pipeline/image-price.ts';
import { imageEditsTranslation, imagesTranslation } from '../translate/select.ts';
import { imageEditFields, imagesBody } from './image-schemas.ts';
import { keyFirst } from './key-first.ts';
import { imageFormParser, releaseImageForm, type ImageEditUpload } from './multipart-images.ts';
import { Spool } from '../uploads/spool.ts';
import { serveCall } from './serve-call.ts';
import { parseBody, taskTypeOf } from './validate.ts';

/**
 * Input tokens an upstream may count for one input image of an edit, beyond its bytes (which do not bound them: an
 * image is priced by its pixels). gpt-image-1 at high input fidelity counts up to ~6,240 for a 1536x1024 image.
 */
export const EDIT_IMAGE_TOKENS = 8192;

function demandOf(b: { n?: number | null; size?: string | null; quality?: string | null }): ImageDemand {
  return { n: b.n ?? 1, size: b.size ?? null, quality: b.quality ?? null };
}

export function imageRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/images/generations', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(imagesBody, req.body);
    const image = demandOf(body);
    return serveCall(deps, req, reply, {
      dialect: 'openai',
      endpoint: 'images.generations',
      modelType: 'image',
      modelId: body.model,
      stream: body.stream === true,
      taskType: taskTypeOf(body.metadata),
      maxTokens: undefined,
      image,
      inputBytes: req.bodyBytes,
      translationFor: imagesTranslation(body, image.n),
    });
  });

  // Its own scope: the multipart parser serves this route only.
  void app.register(async (scope) => {
    const spool = deps.spool ?? new Spool();
    imageFormParser(scope, spool);
    // A form read but never handled (a hook refused the call) lets its files go too; release is idempotent.
    scope.addHook('onResponse', async (req) => releaseImageForm(req.imageForm));
    scope.post('/v1/images/edits', { onRequest: keyFirst('openai') }, async (req, reply) => {
      const form = req.imageForm;
      if (!form) {
        throw new GatewayError('invalid_request', 'An image edit is a multipart form (Content-Type: multipart/form-data) with the image files and a prompt.');
      }
      try {
        return await edit(deps, req, reply, form);
      } finally {
        // The call ended, however it ended: the form's temporary files are deleted.
        await releaseImageForm(form);
      }
    });
  });
}

async function edit(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, form: ImageEditUpload): Promise<FastifyReply> {
  const fields = parseBody(imageEditFields, { ...form.fields });
  const image = demandOf(fields);
  return serveCall(deps, req, reply, {
    dialect: 'openai',
    endpoint: 'images.edits',
    modelType: 'image',
    modelId: fields.model,
    stream: fields.stream === true,
    taskType: null,
    maxTokens: undefined,
    image,
    // The input: the text fields' bytes, and each image (the mask included) at its worst case in tokens.
    inputBytes: Object.values(form.fields).reduce((s, v) => s + Buffer.byteLength(v), 0),
    extraInputTokens: form.files.length * EDIT_IMAGE_TOKENS,
    translationFor: imageEditsTranslation(form, image.n),
  });
}
