// The fake Google model APIs (test/fakes/google) checked by Google's own client, @google/genai, before the gateway is
// pointed at them: in Vertex mode (project, location, an OAuth token the fake metadata server issued) and in API-key
// mode (the Gemini API), generateContent and generateContentStream parse, usage included, and the fake refuses what
// Google refuses (an API key on Vertex, a wrong key on the Gemini API).
import { EditMode, GoogleGenAI, MaskReferenceImage, MaskReferenceMode, RawReferenceImage } from '@google/genai';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { rgbaPng } from '../helpers/png.ts';
import { GEMINI_FAKE_REPLY, IMAGEN_FILTERED, IMAGEN_PNG, startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';

const API_KEY = 'AIza-fake-gemini-key-for-tests';
let metadata: FakeMetadata;
let google: FakeGoogle;

/** A token from the fake metadata server, fetched as a GKE pod would. */
async function metadataToken(): Promise<string> {
  const res = await fetch(`http://${metadata.host}/computeMetadata/v1/instance/service-accounts/default/token`, { headers: { 'Metadata-Flavor': 'Google' } });
  return ((await res.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  metadata = await startFakeMetadata();
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set([API_KEY]) });
});

afterAll(async () => {
  await google?.close();
  await metadata?.close();
});

async function vertexClient(): Promise<GoogleGenAI> {
  const authClient = new OAuth2Client();
  authClient.setCredentials({ access_token: await metadataToken(), expiry_date: Date.now() + 3_600_000 });
  return new GoogleGenAI({
    vertexai: true,
    project: 'proj-1',
    location: 'us-central1',
    // @google/genai bundles google-auth-library 10 (its own types); the client is the same at run time.
    googleAuthOptions: { authClient: authClient as never },
    httpOptions: { baseUrl: google.url, apiVersion: 'v1' },
  });
}

describe('the fake Vertex AI, read by @google/genai', () => {
  it('answers generateContent with text and usage', async () => {
    const ai = await vertexClient();
    google.enqueueGemini({ kind: 'reply', text: 'Bonjour from Vertex.', usage: { prompt: 21, candidates: 5, cached: 4, thoughts: 3 } });
    const r = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Say hello' });
    expect(r.text).toBe('Bonjour from Vertex.');
    expect(r.candidates?.[0]?.finishReason).toBe('STOP');
    expect(r.usageMetadata).toMatchObject({ promptTokenCount: 21, candidatesTokenCount: 5, cachedContentTokenCount: 4, thoughtsTokenCount: 3 });
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(String(call?.headers.authorization)).toMatch(/^Bearer ya29\.fake-gke-/);
  });

  it('streams generateContentStream chunk by chunk, usage on the last', async () => {
    const ai = await vertexClient();
    google.enqueueGemini({ kind: 'reply', text: 'one two three', usage: { prompt: 8, candidates: 3 } });
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Count' })) chunks.push(c);
    expect(chunks.map((c) => c.text).join('')).toBe('one two three');
    expect(chunks.length).toBe(3);
    expect(chunks.at(-1)?.usageMetadata).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 3 });
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(google.calls.at(-1)?.path).toMatch(/:streamGenerateContent\?alt=sse$/);
  });

  it('answers function calls', async () => {
    const ai = await vertexClient();
    google.enqueueGemini({ kind: 'reply', calls: [{ name: 'get_weather', args: { city: 'Paris' } }] });
    const r = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Weather in Paris?',
      config: {
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } } }] }],
      },
    });
    expect(r.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
  });

  it("gives Google's error shape and status (429 RESOURCE_EXHAUSTED)", async () => {
    const ai = await vertexClient();
    google.enqueueGemini({ kind: 'status', status: 429, message: 'Resource exhausted. Please try again later.' });
    const err = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }).catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(429);
    expect(String((err as Error).message)).toContain('RESOURCE_EXHAUSTED');
  });

  it('refuses an API key, and a token it did not issue', async () => {
    const res = await fetch(`${google.url}/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': API_KEY },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    const forged = new OAuth2Client();
    forged.setCredentials({ access_token: 'ya29.forged', expiry_date: Date.now() + 3_600_000 });
    const ai = new GoogleGenAI({
      vertexai: true,
      project: 'p',
      location: 'global',
      googleAuthOptions: { authClient: forged as never },
      httpOptions: { baseUrl: google.url, apiVersion: 'v1' },
    });
    const err = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }).catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(401);
  });
});

describe('the fake Imagen on Vertex AI, read by @google/genai generateImages', () => {
  it('answers predict with image bytes in the shape the SDK reads, and filtered images as Imagen leaves them out', async () => {
    const ai = await vertexClient();
    const r = await ai.models.generateImages({ model: 'imagen-3.0-generate-002', prompt: 'a lighthouse', config: { numberOfImages: 2, aspectRatio: '16:9' } });
    expect(r.generatedImages).toHaveLength(2);
    expect(r.generatedImages?.[0]?.image?.imageBytes).toBe(IMAGEN_PNG);
    expect(r.generatedImages?.[0]?.image?.mimeType).toBe('image/png');
    expect(r.generatedImages?.[0]?.enhancedPrompt).toBe('a lighthouse, detailed');
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-central1/publishers/google/models/imagen-3.0-generate-002:predict');
    expect(call?.body).toMatchObject({ instances: [{ prompt: 'a lighthouse' }], parameters: { sampleCount: 2, aspectRatio: '16:9' } });
    const filtered = await ai.models.generateImages({ model: 'imagen-3.0-generate-002', prompt: `a ${IMAGEN_FILTERED}`, config: { includeRaiReason: true } });
    expect(filtered.generatedImages?.[0]?.raiFilteredReason).toContain('filtered');
    expect(filtered.generatedImages?.[0]?.image?.imageBytes).toBeUndefined();
  });
});

describe('the fake Imagen editing on Vertex AI, driven by @google/genai editImage', () => {
  it('takes a raw and a user-provided mask reference in the shape the SDK sends and answers edited images it reads', async () => {
    const ai = await vertexClient();
    const image = rgbaPng(8, 4, () => 255).toString('base64');
    const mask = Object.assign(new MaskReferenceImage(), {
      referenceId: 2,
      referenceImage: { imageBytes: rgbaPng(8, 4, (x) => (x < 4 ? 0 : 255)).toString('base64'), mimeType: 'image/png' },
      config: { maskMode: MaskReferenceMode.MASK_MODE_USER_PROVIDED },
    });
    const raw = Object.assign(new RawReferenceImage(), { referenceId: 1, referenceImage: { imageBytes: image, mimeType: 'image/png' } });
    const r = await ai.models.editImage({
      model: 'imagen-3.0-capability-001',
      prompt: 'a boat on the lake',
      referenceImages: [raw, mask],
      config: { editMode: EditMode.EDIT_MODE_INPAINT_INSERTION, numberOfImages: 2 },
    });
    expect(r.generatedImages).toHaveLength(2);
    expect(r.generatedImages?.[0]?.image?.imageBytes).toBe(image);
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-central1/publishers/google/models/imagen-3.0-capability-001:predict');
    expect(call?.body).toMatchObject({
      instances: [
        {
          prompt: 'a boat on the lake',
          referenceImages: [
            { referenceType: 'REFERENCE_TYPE_RAW', referenceId: 1, referenceImage: { bytesBase64Encoded: image } },
            { referenceType: 'REFERENCE_TYPE_MASK', referenceId: 2, maskImageConfig: { maskMode: 'MASK_MODE_USER_PROVIDED' } },
          ],
        },
      ],
      parameters: { editMode: 'EDIT_MODE_INPAINT_INSERTION', sampleCount: 2 },
    });
    // A mask of another size than the image is refused as Imagen refuses it.
    const wrong = Object.assign(new MaskReferenceImage(), { ...mask, referenceImage: { imageBytes: rgbaPng(2, 2, () => 0).toString('base64') } });
    const err = await ai.models
      .editImage({ model: 'imagen-3.0-capability-001', prompt: 'x', referenceImages: [raw, wrong], config: { editMode: EditMode.EDIT_MODE_INPAINT_INSERTION } })
      .catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(400);
  });
});

describe('the fake Gemini API, read by @google/genai with an API key', () => {
  const client = (apiKey: string): GoogleGenAI => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: google.url, apiVersion: 'v1beta' } });

  it('answers generateContent and streams', async () => {
    const r = await client(API_KEY).models.generateContent({ model: 'gemini-2.5-flash', contents: 'Say hello' });
    expect(r.text).toBe(GEMINI_FAKE_REPLY);
    expect(google.calls.at(-1)?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(google.calls.at(-1)?.headers['x-goog-api-key']).toBe(API_KEY);
    const chunks = [];
    for await (const c of await client(API_KEY).models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Say hello' })) chunks.push(c);
    expect(chunks.map((c) => c.text).join('')).toBe(GEMINI_FAKE_REPLY);
    expect(chunks.at(-1)?.usageMetadata?.promptTokenCount).toBe(11);
  });

  it('refuses a wrong key with 400 INVALID_ARGUMENT', async () => {
    const err = await client('AIza-wrong')
      .models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' })
      .catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(400);
    expect(String((err as Error).message)).toContain('API key not valid');
  });
});
