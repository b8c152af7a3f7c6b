// A loopback fake of Google's model APIs: Vertex AI (Gemini generateContent and streamGenerateContent?alt=sse under
// /v1/projects/{p}/locations/{l}/publishers/google/models/{m}, Claude rawPredict, streamRawPredict and count-tokens
// under .../publishers/anthropic/models/{m}) and the Gemini API (/v1beta/models/{m}:generateContent, ...). It checks
// authentication as Google does: Vertex takes only an OAuth bearer token (one the fake metadata server or the fake
// token endpoint issued and that has not expired) and refuses API keys; the Gemini API takes x-goog-api-key (or a
// bearer token). Gemini answers are GenerateContentResponse objects; streams are `data: {json}\r\n\r\n` per chunk with
// usageMetadata on the last. Claude answers are Anthropic's (test/fakes/anthropic-upstream.ts). Errors are Google's
// `{"error": {"code", "message", "status"}}` (Claude's request errors are Anthropic's shape, as on Vertex).
import type { ServerResponse } from 'node:http';
import { answerMessages, type AnthropicBehavior } from '../anthropic-upstream.ts';
import { echoedCredential } from '../echo-credential.ts';
import { startRecordingServer, type RecordedCall } from '../recording-server.ts';

export interface GeminiUsage {
  prompt: number;
  candidates: number;
  cached?: number;
  thoughts?: number;
}

export type GeminiBehavior =
  | {
      kind: 'reply';
      text?: string;
      calls?: Array<{ name: string; args: Record<string, unknown> }>;
      usage?: GeminiUsage;
      finishReason?: string;
      chunkDelayMs?: number;
    }
  | { kind: 'status'; status: number; googleStatus?: string; message?: string; retryAfter?: string }
  | { kind: 'stall' }
  | { kind: 'cut'; afterChunks: number }
  /** A stream that ends with Google's error object after `afterChunks` chunks; `echo`: its message quotes the credential. */
  | { kind: 'error-event'; afterChunks: number; echo?: boolean };

export interface FakeGoogle {
  url: string;
  calls: RecordedCall[];
  readonly open: number;
  readonly sockets: number;
  /** Behaviours of the next Claude (rawPredict) calls, then `claudeFallback`. */
  enqueueClaude(...b: AnthropicBehavior[]): void;
  claudeFallback: (call: RecordedCall) => AnthropicBehavior;
  enqueueGemini(...b: GeminiBehavior[]): void;
  geminiFallback: (call: RecordedCall) => GeminiBehavior;
  /** Tokens of Claude answered to callers (input, output), as the Anthropic fake counts them; the gateway's probes are not counted. */
  served: { input: number; output: number };
  /** Refusals for authentication, counted. */
  refused: number;
  close(): Promise<void>;
}

export interface GoogleAuthCheck {
  /** A bearer token the fake accepts (issued by a fake token source, not expired). */
  bearer: (token: string) => boolean;
  /** Gemini API keys the fake accepts. */
  apiKeys: ReadonlySet<string>;
}

export const GEMINI_FAKE_REPLY = 'Hello from the fake Gemini upstream.';
export const DEFAULT_GEMINI_USAGE: GeminiUsage = { prompt: 11, candidates: 7 };

const VERTEX = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;
const GEMINI_API = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleError(status: number, message: string, googleStatus = STATUS_NAMES[status] ?? 'UNKNOWN'): string {
  return JSON.stringify({ error: { code: status, message, status: googleStatus } });
}

export async function startFakeGoogle(auth: GoogleAuthCheck, name = 'fake-google'): Promise<FakeGoogle> {
  const claudeQueue: AnthropicBehavior[] = [];
  const geminiQueue: GeminiBehavior[] = [];
  const http = await startRecordingServer((call, res) => {
    const [path = '', query = ''] = call.path.split('?');
    const v = VERTEX.exec(path);
    const g = GEMINI_API.exec(path);
    if (call.method !== 'POST' || (!v && !g)) return fail(res, 404, `The requested URL ${path} was not found on this server.`);
    if (v && !vertexAuthorized(call, res)) return;
    if (g && !geminiAuthorized(call, res)) return;
    const model = decodeURIComponent((v ? v[4] : g?.[1]) ?? '');
    const method = (v ? v[5] : g?.[2]) ?? '';
    if (v?.[3] === 'anthropic') return claude(call, res, model, method);
    if (method === 'predict' && model.startsWith('imagen')) {
      const instance = (call.body.instances as Array<{ referenceImages?: unknown }> | undefined)?.[0];
      if (instance?.referenceImages !== undefined)
        return v ? imagenEdit(call, res, model) : fail(res, 400, 'Image editing is not supported by the Gemini API.');
      return imagen(call, res);
    }
    const stream = method === 'streamGenerateContent';
    if (!stream && method !== 'generateContent') return fail(res, 404, `Method ${method} not found.`);
    if (stream && !/(^|&)alt=sse(&|$)/.test(query)) return fail(res, 400, 'This fake streams with alt=sse only.');
    if (!Array.isArray(call.body.contents) || call.body.contents.length === 0)
      return fail(res, 400, '* GenerateContentRequest.contents: contents is not specified');
    if ('model' in call.body) return fail(res, 400, 'Invalid JSON payload received. Unknown name "model": Cannot find field.');
    // The gateway's availability probe ('ping', one output token) never takes a behaviour a test queued for its own call.
    const cfg = call.body.generationConfig as { maxOutputTokens?: number } | undefined;
    const probe = cfg?.maxOutputTokens === 1 && JSON.stringify(call.body.contents).includes('"text":"ping"');
    void gemini(fake, call, res, model, stream, (probe ? undefined : geminiQueue.shift()) ?? fake.geminiFallback(call));
  });

  function vertexAuthorized(call: RecordedCall, res: ServerResponse): boolean {
    const authz = String(call.headers.authorization ?? '');
    if (call.headers['x-goog-api-key'] && !authz) {
      fake.refused++;
      fail(res, 401, 'API keys are not supported by this API. Expected OAuth2 access token or other authentication credentials that assert a principal.');
      return false;
    }
    const token = /^Bearer (.+)$/.exec(authz)?.[1];
    if (!token || !auth.bearer(token)) {
      fake.refused++;
      fail(res, 401, 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
      return false;
    }
    return true;
  }

  function geminiAuthorized(call: RecordedCall, res: ServerResponse): boolean {
    const key = call.headers['x-goog-api-key'];
    if (typeof key === 'string') {
      if (auth.apiKeys.has(key)) return true;
      fake.refused++;
      fail(res, 400, 'API key not valid. Please pass a valid API key.');
      return false;
    }
    const token = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''))?.[1];
    if (token && auth.bearer(token)) return true;
    fake.refused++;
    fail(
      res,
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
    return false;
  }

  function claude(call: RecordedCall, res: ServerResponse, model: string, method: string): void {
    const body = call.body;
    if (body.anthropic_version !== 'vertex-2023-10-16') return anthropicInvalid(res, "anthropic_version: Input should be 'vertex-2023-10-16'");
    if (model === 'count-tokens') {
      if (method !== 'rawPredict') return fail(res, 404, `Method ${method} not found.`);
      if (typeof body.model !== 'string') return anthropicInvalid(res, 'model: Field required');
      const n = Math.ceil(JSON.stringify([body.system ?? '', body.messages ?? [], body.tools ?? []]).length / 4);
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: n }));
    }
    if (method !== 'rawPredict' && method !== 'streamRawPredict') return fail(res, 404, `Method ${method} not found.`);
    if ('model' in body) return anthropicInvalid(res, 'model: Extra inputs are not permitted');
    if ((method === 'streamRawPredict') !== (body.stream === true))
      return anthropicInvalid(res, `stream must be ${method === 'streamRawPredict'} for ${method}`);
    // The gateway's availability probe (one 'ping', max_tokens 1) may come at any moment: it never takes a behaviour a
    // test queued for its own call.
    const probe = body.max_tokens === 1 && JSON.stringify(body.messages) === '[{"role":"user","content":"ping"}]';
    const b = (probe ? undefined : claudeQueue.shift()) ?? fake.claudeFallback(call);
    // Nor is it counted in `served`: a test compares that with what its own caller was billed.
    void answerMessages(probe ? { served: { input: 0, output: 0 } } : fake, name, { ...call, body: { ...body, model } }, b, res);
  }

  const fake: FakeGoogle = {
    url: http.url,
    calls: http.calls,
    get open() {
      return http.open;
    },
    get sockets() {
      return http.sockets;
    },
    enqueueClaude: (...b) => claudeQueue.push(...b),
    claudeFallback: () => ({ kind: 'reply' }),
    enqueueGemini: (...b) => geminiQueue.push(...b),
    geminiFallback: () => ({ kind: 'reply' }),
    served: { input: 0, output: 0 },
    refused: 0,
    close: http.close,
  };
  return fake;
}

/** A 1x1 PNG: every image the fake Imagen makes. */
export const IMAGEN_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
/** A prompt with this word gets its images filtered (predictions with raiFilteredReason only, as Imagen answers). */
export const IMAGEN_FILTERED = 'forbidden-subject';
const IMAGEN_RATIOS = new Set(['1:1', '3:4', '4:3', '9:16', '16:9']);

/** Imagen's predict: instances[0].prompt, parameters.sampleCount (1-4) and aspectRatio; predictions of image bytes. */
function imagen(call: RecordedCall, res: ServerResponse): void {
  const instances = call.body.instances as Array<{ prompt?: unknown }> | undefined;
  const prompt = instances?.[0]?.prompt;
  if (typeof prompt !== 'string' || prompt === '') return fail(res, 400, 'Prompt is required.');
  const p = (call.body.parameters ?? {}) as { sampleCount?: unknown; aspectRatio?: unknown; outputOptions?: { mimeType?: unknown } };
  const count = p.sampleCount ?? 1;
  if (typeof count !== 'number' || count < 1 || count > 4) return fail(res, 400, 'sampleCount must be between 1 and 4.');
  if (p.aspectRatio !== undefined && !IMAGEN_RATIOS.has(String(p.aspectRatio))) return fail(res, 400, `Unsupported aspect ratio ${String(p.aspectRatio)}.`);
  const mimeType = typeof p.outputOptions?.mimeType === 'string' ? p.outputOptions.mimeType : 'image/png';
  if (prompt.includes(IMAGEN_FILTERED)) {
    const filtered = { raiFilteredReason: 'Your current safety filter threshold filtered out 1 generated images. You will not be charged for blocked images.' };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ predictions: [filtered] }));
    return;
  }
  const predictions = Array.from({ length: count }, () => ({ mimeType, bytesBase64Encoded: IMAGEN_PNG, prompt: `${prompt}, detailed` }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ predictions }));
}

function fail(res: ServerResponse, status: number, message: string, googleStatus?: string, retryAfter?: string): void {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=UTF-8' };
  if (retryAfter) headers['retry-after'] = retryAfter;
  res.writeHead(status, headers).end(googleError(status, message, googleStatus));
}

function anthropicInvalid(res: ServerResponse, message: string): void {
  res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Reply = Extract<GeminiBehavior, { kind: 'reply' }>;

function usageMetadata(u: GeminiUsage): Record<string, number> {
  return {
    promptTokenCount: u.prompt,
    candidatesTokenCount: u.candidates,
    totalTokenCount: u.prompt + u.candidates + (u.thoughts ?? 0),
    ...(u.cached !== undefined ? { cachedContentTokenCount: u.cached } : {}),
    ...(u.thoughts !== undefined ? { thoughtsTokenCount: u.thoughts } : {}),
  };
}

/** The text split into chunks (by word), then the function calls, each part in its own chunk. */
function partsOf(r: Reply): Array<Record<string, unknown>> {
  const calls = r.calls ?? [];
  const text = r.text ?? (calls.length > 0 ? '' : GEMINI_FAKE_REPLY);
  const parts: Array<Record<string, unknown>> = text === '' ? [] : text.split(/(?<= )/).map((t) => ({ text: t }));
  for (const c of calls) parts.push({ functionCall: { name: c.name, args: c.args } });
  return parts;
}

function responseOf(model: string, parts: Array<Record<string, unknown>>, finishReason: string | null, usage: GeminiUsage | null): object {
  return {
    candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    ...(usage ? { usageMetadata: usageMetadata(usage) } : {}),
    modelVersion: model,
    createTime: new Date().toISOString(),
    responseId: 'fake-response-id',
  };
}

async function gemini(fake: FakeGoogle, call: RecordedCall, res: ServerResponse, model: string, stream: boolean, b: GeminiBehavior): Promise<void> {
  if (b.kind === 'status') return fail(res, b.status, b.message ?? `${b.status} from the fake`, b.googleStatus, b.retryAfter);
  if (b.kind === 'stall') return;
  const reply: Reply = b.kind === 'reply' ? b : { kind: 'reply' };
  const usage = reply.usage ?? DEFAULT_GEMINI_USAGE;
  const finish = reply.finishReason ?? 'STOP';
  const parts = partsOf(reply);
  if (!stream) {
    if (b.kind === 'cut') return void res.socket?.destroy();
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(responseOf(model, mergeText(parts), finish, usage)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' });
  res.flushHeaders();
  const chunks = parts.length > 0 ? parts : [{ text: '' }];
  for (let i = 0; i < chunks.length; i++) {
    if (res.destroyed) return;
    if (b.kind === 'cut' && i === b.afterChunks) {
      await sleep(30);
      return void res.socket?.destroy();
    }
    if (b.kind === 'error-event' && i === b.afterChunks) {
      return void res.end(`data: ${googleError(429, b.echo ? echoedCredential(call) : 'Resource exhausted.')}\r\n\r\n`);
    }
    const last = i === chunks.length - 1;
    res.write(
      `data: ${JSON.stringify(responseOf(model, [chunks[i] as object as Record<string, unknown>], last ? finish : null, last ? usage : null))}\r\n\r\n`,
    );
    if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
  }
  res.end();
}

/** One text part for the whole text in a non-streamed answer (as Gemini answers), function calls after it. */
function mergeText(parts: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const text = parts
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('');
  const rest = parts.filter((p) => typeof p.text !== 'string');
  return text === '' ? rest : [{ text }, ...rest];
}

const EDIT_MODES = new Set(['EDIT_MODE_DEFAULT', 'EDIT_MODE_INPAINT_INSERTION', 'EDIT_MODE_INPAINT_REMOVAL', 'EDIT_MODE_OUTPAINT', 'EDIT_MODE_BGSWAP']);

interface ReferenceImage {
  referenceType?: unknown;
  referenceId?: unknown;
  referenceImage?: { bytesBase64Encoded?: unknown };
  maskImageConfig?: { maskMode?: unknown };
}

/** A PNG's width and height from its IHDR, or null. */
function pngDims(b64: string): string | null {
  const b = Buffer.from(b64.slice(0, 44), 'base64');
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return `${b.readUInt32BE(16)}x${b.readUInt32BE(20)}`;
}

/**
 * Imagen's editing (imagen-3.0-capability-*): instances[0].referenceImages with one REFERENCE_TYPE_RAW image and, for
 * the mask modes, one REFERENCE_TYPE_MASK (MASK_MODE_USER_PROVIDED: a PNG the raw image's size); parameters.editMode,
 * sampleCount (1-4). The "edited" images are the raw image sent back (an edit keeps the image's size).
 */
function imagenEdit(call: RecordedCall, res: ServerResponse, model: string): void {
  if (!model.startsWith('imagen-3.0-capability')) return fail(res, 400, `Image editing is not supported by ${model}.`);
  const instance = (call.body.instances as Array<{ prompt?: unknown; referenceImages?: unknown }>)[0] ?? {};
  const refs = Array.isArray(instance.referenceImages) ? (instance.referenceImages as ReferenceImage[]) : [];
  const raw = refs.filter((r) => r.referenceType === 'REFERENCE_TYPE_RAW');
  const masks = refs.filter((r) => r.referenceType === 'REFERENCE_TYPE_MASK');
  if (raw.length !== 1 || masks.length > 1 || raw.length + masks.length !== refs.length)
    return fail(res, 400, 'Exactly one raw reference image and at most one mask are supported.');
  const ids = refs.map((r) => r.referenceId);
  if (ids.some((id) => typeof id !== 'number') || new Set(ids).size !== ids.length) return fail(res, 400, 'Reference ids must be unique integers.');
  const rawB64 = raw[0]?.referenceImage?.bytesBase64Encoded;
  if (typeof rawB64 !== 'string' || rawB64 === '') return fail(res, 400, 'The raw reference image has no bytes.');
  const p = (call.body.parameters ?? {}) as { sampleCount?: unknown; editMode?: unknown; outputOptions?: { mimeType?: unknown } };
  const mode = p.editMode ?? 'EDIT_MODE_DEFAULT';
  if (!EDIT_MODES.has(String(mode))) return fail(res, 400, `Unsupported edit mode ${String(mode)}.`);
  const mask = masks[0];
  if (mode !== 'EDIT_MODE_DEFAULT' && !mask) return fail(res, 400, `${String(mode)} needs a mask reference image.`);
  if (mask) {
    const maskMode = mask.maskImageConfig?.maskMode;
    if (maskMode !== 'MASK_MODE_USER_PROVIDED') return fail(res, 400, 'This fake takes user-provided masks only.');
    const b64 = mask.referenceImage?.bytesBase64Encoded;
    if (typeof b64 !== 'string' || pngDims(b64) === null) return fail(res, 400, 'The mask image must be a PNG.');
    if (pngDims(b64) !== pngDims(rawB64)) return fail(res, 400, 'The mask must be the same size as the raw reference image.');
  }
  const count = p.sampleCount ?? 1;
  if (typeof count !== 'number' || count < 1 || count > 4) return fail(res, 400, 'sampleCount must be between 1 and 4.');
  const mimeType = typeof p.outputOptions?.mimeType === 'string' ? p.outputOptions.mimeType : 'image/png';
  const predictions = Array.from({ length: count }, () => ({ mimeType, bytesBase64Encoded: rawB64 }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ predictions }));
}
