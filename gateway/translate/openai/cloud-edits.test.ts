// The clouds' image edit translators on their own: what each refuses (before admission, a 400 naming the field), the
// body each makes from the form's bytes, and that neither changes the form it was given (a fallback re-runs them).
import { describe, expect, it } from 'vitest';
import { rgbaPng } from '../../../test/helpers/png.ts';
import type { CompiledModel, CompiledTarget } from '../../contract/snapshot.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { memoryBytes } from '../../uploads/held-bytes.ts';
import type { FormFile } from '../multipart-encode.ts';
import { bedrockImageEditsFromOpenAI, checkBedrockEdit } from './openai-bedrock-image-edits.ts';
import { checkImagenEdit, imagenEditsFromOpenAI } from './openai-imagen-edits.ts';

const PHOTO = rgbaPng(4, 2, () => 255);
const MASK = rgbaPng(4, 2, (x) => (x < 2 ? 0 : 255));
const file = (field: string, b: Buffer): FormFile => ({ field, filename: `${field}.png`, contentType: 'image/png', data: memoryBytes([b]), inMemory: b });
const IMAGE = file('image', PHOTO);
const WITH_MASK = [IMAGE, file('mask', MASK)];
const model = { id: 'm', imagePrices: [] } as unknown as CompiledModel;
const target = (provider: string, upstreamModel: string) => ({ provider, upstreamModel }) as unknown as CompiledTarget;

function paramOf(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    expect((e as GatewayError).status).toBe(400);
    return (e as GatewayError).param ?? null;
  }
}

describe('what a cloud edit refuses', () => {
  const fields = { model: 'm', prompt: 'p' };
  it.each([
    [{ stream: 'true' }, 1, WITH_MASK, 'stream'],
    [{ response_format: 'url' }, 1, WITH_MASK, 'response_format'],
    [{ size: '1024x1024' }, 1, WITH_MASK, 'size'],
    [{ background: 'transparent' }, 1, WITH_MASK, 'background'],
    [{ input_fidelity: 'high' }, 1, WITH_MASK, 'input_fidelity'],
    [{}, 1, [IMAGE, file('image[]', PHOTO)], 'image'],
    [{}, 5, WITH_MASK, 'n'],
    [{ output_format: 'webp' }, 1, WITH_MASK, 'output_format'],
    [{ quality: 'high' }, 1, WITH_MASK, 'quality'],
  ] as const)('Imagen: %o with n=%i -> 400 on %s', (extra, n, files, param) => {
    expect(paramOf(() => checkImagenEdit({ ...fields, ...extra }, n, files))).toBe(param);
  });

  it.each([
    [{}, 1, [IMAGE], 'mask'],
    [{}, 6, WITH_MASK, 'n'],
    [{ output_format: 'jpeg' }, 1, WITH_MASK, 'output_format'],
    [{ quality: 'low' }, 1, WITH_MASK, 'quality'],
    [{ size: 'auto', quality: 'auto' }, 5, WITH_MASK, null],
  ] as const)('Bedrock: %o with n=%i -> 400 on %s', (extra, n, files, param) => {
    expect(paramOf(() => checkBedrockEdit({ ...fields, ...extra }, n, files))).toBe(param);
  });

  it('Imagen on the Gemini API (which does not edit): 400 on model', () => {
    const t = imagenEditsFromOpenAI({ fields, files: [IMAGE] }, 1);
    expect(paramOf(() => t.request(target('gemini', 'imagen-3.0-capability-001'), model))).toBe('model');
  });
});

describe('the bodies', () => {
  it('Imagen: raw and mask references, the mask white where OpenAI is transparent; the form unchanged', async () => {
    const form = { fields: { model: 'm', prompt: 'a boat', output_format: 'jpeg' }, files: WITH_MASK };
    const before = JSON.stringify(form);
    const req = imagenEditsFromOpenAI(form, 2).request(target('vertex', 'imagen-3.0-capability-001'), model);
    const body = JSON.parse((await req.load?.()) ?? '{}') as { instances: Array<{ referenceImages: Array<Record<string, unknown>> }>; parameters: unknown };
    expect(body.parameters).toEqual({ editMode: 'EDIT_MODE_INPAINT_INSERTION', sampleCount: 2, outputOptions: { mimeType: 'image/jpeg' } });
    expect(body.instances[0]?.referenceImages.map((r) => r.referenceType)).toEqual(['REFERENCE_TYPE_RAW', 'REFERENCE_TYPE_MASK']);
    expect(JSON.stringify(form)).toBe(before);
  });

  it('Bedrock: INPAINTING with the image, the prompt, the mask and the quality as Bedrock names it', async () => {
    const form = { fields: { model: 'm', prompt: 'a kite', quality: 'hd' }, files: WITH_MASK };
    const req = bedrockImageEditsFromOpenAI(form, 3).request(target('bedrock', 'amazon.titan-image-generator-v2:0'), model);
    const body = JSON.parse((await req.load?.()) ?? '{}') as { taskType: string; inPaintingParams: Record<string, string>; imageGenerationConfig: unknown };
    expect(body.taskType).toBe('INPAINTING');
    expect(body.inPaintingParams.image).toBe(PHOTO.toString('base64'));
    expect(body.inPaintingParams.text).toBe('a kite');
    expect(body.imageGenerationConfig).toEqual({ numberOfImages: 3, quality: 'premium' });
  });
});
