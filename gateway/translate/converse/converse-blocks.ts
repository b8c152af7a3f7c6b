// Pieces of a Converse request shared by the client dialects' request builders: images and PDFs as inline bytes
// (Bedrock fetches no URL), tool specs, the structured-output config, and the turn order Converse requires
// (user and assistant alternating: consecutive turns of one role merged, empty turns left out).
import { invalid, isObject, objectAt, unsupported, type Json } from '../json-read.ts';

export const NO_CONVERSE = 'has no equivalent on a Bedrock Converse upstream, which serves this model';

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** An image of a media type and base64 data -> a Converse image block. */
export function imageOf(mediaType: string, data: string, path: string): Json {
  const format = IMAGE_FORMATS[mediaType.toLowerCase()];
  if (!format) throw unsupported(path, `an image of type ${mediaType} ${NO_CONVERSE} (png, jpeg, gif and webp only)`);
  return { image: { format, source: { bytes: data } } };
}

/** An image URL: only a base64 data URL can be sent, Bedrock fetches no URL. */
export function imageOfUrl(url: string, path: string): Json {
  const m = DATA_URL.exec(url);
  if (m?.[1] !== undefined && m[2] !== undefined) return imageOf(m[1], m[2], path);
  if (/^https?:\/\//i.test(url)) throw unsupported(path, 'Bedrock fetches no image URL: send the image as a base64 data URL');
  throw invalid(path, 'must be an http(s) URL or a base64 data URL');
}

/** A document name as Converse accepts it (letters, digits, spaces, hyphens, parentheses, brackets). */
function documentName(name: string | undefined, fallback: string): string {
  const clean = (name ?? '')
    .replace(/\.[A-Za-z0-9]+$/, '')
    .replace(/[^A-Za-z0-9 ()[\]-]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  return clean || fallback;
}

/** A base64 PDF -> a Converse document block. */
export function pdfOf(data: string, name: string | undefined, fallback: string): Json {
  return { document: { format: 'pdf', name: documentName(name, fallback), source: { bytes: data } } };
}

/** A PDF as a data URL (OpenAI's file_data) -> a document block, or null when it is not one. */
export function pdfOfDataUrl(url: string, name: string | undefined, fallback: string): Json | null {
  const m = DATA_URL.exec(url);
  return m?.[1] === 'application/pdf' && m[2] !== undefined ? pdfOf(m[2], name, fallback) : null;
}

/** A tool -> toolSpec; strict (the input must follow the schema) is passed on, Converse has it. */
export function toolSpecOf(name: string, description: string | undefined, schema: unknown, strict: unknown): Json {
  const spec: Json = { name };
  if (description !== undefined && description !== '') spec.description = description;
  spec.inputSchema = { json: isObject(schema) ? schema : { type: 'object', properties: {} } };
  if (strict === true) spec.strict = true;
  return { toolSpec: spec };
}

/** A JSON schema the answer must follow -> outputConfig (Converse takes the schema as a JSON string). */
export function outputConfigOf(schema: unknown, path: string, name?: string, description?: string): Json {
  const jsonSchema: Json = { schema: JSON.stringify(objectAt(schema, path)) };
  if (name !== undefined) jsonSchema.name = name;
  if (description !== undefined) jsonSchema.description = description;
  return { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
}

export interface Turn {
  role: 'user' | 'assistant';
  content: Json[];
}

/** Converse requires alternating roles: consecutive turns of one role become one; empty turns are left out. */
export function alternating(turns: Turn[]): Turn[] {
  const out: Turn[] = [];
  for (const t of turns) {
    if (t.content.length === 0) continue;
    const last = out.at(-1);
    if (last?.role === t.role) last.content = [...last.content, ...t.content];
    else out.push({ role: t.role, content: [...t.content] });
  }
  return out;
}

/** Whether a conversation holds tool calls or results (Converse then needs toolConfig). */
export function usesTools(turns: Turn[]): boolean {
  return turns.some((t) => t.content.some((b) => 'toolUse' in b || 'toolResult' in b));
}

/** inferenceConfig from the values the client gave (temperature clamped to [0, 1], the range Bedrock's models take). */
export function inferenceConfigOf(maxTokens: number, temperature: unknown, topP: unknown, stop: string[]): Json {
  const out: Json = { maxTokens };
  if (typeof temperature === 'number') out.temperature = Math.min(1, Math.max(0, temperature));
  if (typeof topP === 'number') out.topP = topP;
  if (stop.length > 0) out.stopSequences = stop;
  return out;
}
