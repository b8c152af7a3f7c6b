// Pieces of a Gemini generateContent request shared by the client dialects (openai-, anthropic-, responses-gemini):
// turns merged by role, media parts, function declarations and calls, tool config. The body carries no model:
// the provider puts target.upstreamModel in the URL.
//
// Media: a base64 data URL becomes `inlineData`. A URL becomes `fileData{fileUri, mimeType}` on Vertex only, which
// fetches gs:// objects and public https URLs; its mimeType, which Vertex requires, is read from the URL's
// extension, and a URL without a known one is refused. The Gemini API fetches no URLs but its own Files API's, so
// a URL is refused there: the client sends the data instead.
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { geminiIdOf } from './gemini-ids.ts';
import { isObject, unsupported, invalid, type Json } from '../json-read.ts';

export const NO_GEMINI = 'has no equivalent on a Gemini upstream, which serves this model';

/** Gemini takes at most 5 stop sequences. */
export const MAX_STOP = 5;

/**
 * Gemini 3 refuses a turn whose function calls come back without their thought signature; clients keep no signature
 * (gemini-ids.ts), so the first call of each model turn gets the value Google documents for calls whose signature
 * is not at hand (history from another model or another client).
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

export type Role = 'user' | 'model';

/**
 * The conversation's turns: consecutive parts of one role go in one turn, as Gemini wants them alternating. Empty
 * text parts are left out (Gemini refuses them), and so is a turn left with no part.
 */
export class Turns {
  readonly contents: Json[] = [];

  push(role: Role, all: Json[]): void {
    const parts = all.filter((p) => p.text !== '');
    if (parts.length === 0) return;
    const last = this.contents.at(-1);
    if (last?.role === role) (last.parts as Json[]).push(...parts);
    else this.contents.push({ role, parts: [...parts] });
  }

  /**
   * The contents, each model turn with calls given the documented placeholder signature on its first call. A
   * conversation with nothing to send is refused (`path` names the client's field), as Gemini would refuse it.
   */
  done(path: string): Json[] {
    if (this.contents.length === 0) throw invalid(path, 'holds no content to send: Gemini needs at least one turn with content');
    for (const c of this.contents) {
      if (c.role !== 'model') continue;
      const calls = (c.parts as Json[]).filter((p) => isObject(p.functionCall));
      if (calls.length > 0) calls[0]!.thoughtSignature = SKIP_SIGNATURE;
    }
    return this.contents;
  }
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

const MIME_BY_EXT: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  mp4: 'video/mp4',
  mov: 'video/mov',
  webm: 'video/webm',
};

/** A data URL -> inlineData; a URL -> fileData on Vertex (see the header); `path` names the client's field. */
export function mediaPart(url: string, target: CompiledTarget, path: string): Json {
  const m = DATA_URL.exec(url);
  if (m) return { inlineData: { mimeType: m[1], data: m[2] } };
  if (!/^(https?|gs):\/\//.test(url)) throw invalid(path, 'must be a URL or a base64 data URL');
  if (target.provider !== 'vertex' || url.startsWith('http://')) {
    throw unsupported(path, `a file by URL ${NO_GEMINI} (only Vertex AI fetches gs:// and https:// URLs): send it as a base64 data URL`);
  }
  const ext = /\.([A-Za-z0-9]+)$/.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  const mimeType = ext ? MIME_BY_EXT[ext] : undefined;
  if (!mimeType)
    throw unsupported(path, 'Vertex AI needs the media type of a file by URL, which this URL does not tell by its extension: send it as a base64 data URL');
  return { fileData: { fileUri: url, mimeType } };
}

/** Inline data of a known media type (a PDF, audio). */
export function inlinePart(mimeType: string, data: string): Json {
  return { inlineData: { mimeType, data } };
}

/** Gemini's function names: letters, digits, `_ . : -`, at most 64 (Google's API refuses others). */
const FUNCTION_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

export function checkFunctionName(name: string, path: string): void {
  if (!FUNCTION_NAME.test(name)) throw unsupported(path, 'Gemini takes function names of at most 64 letters, digits, _ . : or -');
}

/**
 * A function declaration: the client's JSON Schema goes whole in parametersJsonSchema (no OpenAPI-subset rewrite).
 * `namePath` names the client's field, for a name Gemini would refuse.
 */
export function functionDeclaration(name: string, namePath: string, description: string | undefined, schema: unknown): Json {
  checkFunctionName(name, namePath);
  const out: Json = { name };
  if (description !== undefined) out.description = description;
  if (isObject(schema)) out.parametersJsonSchema = schema;
  return out;
}

/** A call of an earlier assistant turn, with Gemini's id back when the call id we gave carries it. */
export function functionCallPart(name: string, args: Json, callId: string): Json {
  const id = geminiIdOf(callId);
  return { functionCall: { name, args, ...(id ? { id } : {}) } };
}

/** A tool's result: Gemini's convention is `{output}` for a result and `{error}` for a failure. */
export function functionResponsePart(name: string, callId: string, text: string, isError = false): Json {
  const id = geminiIdOf(callId);
  return { functionResponse: { ...(id ? { id } : {}), name, response: isError ? { error: text } : { output: text } } };
}

/** Tool arguments (a JSON string) as the object Gemini's args are. */
export function argsObject(args: string, path: string): Json {
  let v: unknown;
  try {
    v = JSON.parse(args.trim() === '' ? '{}' : args);
  } catch {
    throw invalid(path, 'must be a JSON object (Gemini function call arguments are objects)');
  }
  if (!isObject(v)) throw invalid(path, 'must be a JSON object (Gemini function call arguments are objects)');
  return v;
}

/** toolConfig for a mode: AUTO, ANY (optionally one function), NONE. */
export function toolConfig(mode: 'AUTO' | 'ANY' | 'NONE', only?: string): Json {
  return { functionCallingConfig: { mode, ...(only !== undefined ? { allowedFunctionNames: [only] } : {}) } };
}

export function stopSequences(list: unknown[], path: string): string[] {
  if (list.length > MAX_STOP) throw unsupported(path, `Gemini takes at most ${MAX_STOP} stop sequences`);
  return list.map((s, i) => {
    if (typeof s !== 'string') throw invalid(`${path}[${i}]`, 'must be a string');
    return s;
  });
}

/** The names of the calls by id, filled as the assistant turns are read, for the results that follow. */
export class CallNames {
  private readonly names = new Map<string, string>();

  add(id: string, name: string): void {
    this.names.set(id, name);
  }

  /** Gemini names a function's response by the function's name. */
  nameOf(id: string, path: string): string {
    const name = this.names.get(id);
    if (name === undefined)
      throw invalid(path, `${id} is not the id of a tool call of an earlier assistant turn (Gemini needs the function's name for its result)`);
    return name;
  }
}
