// The fields of OpenAI's audio requests the gateway reads or an upstream bills by, checked so a mistake is a 400
// naming the field: the multipart fields of CreateTranscriptionRequest and CreateTranslationRequest, the JSON body of
// CreateSpeechRequest. Other fields pass through to the upstream untouched.
import { z } from 'zod';
import { GatewayError } from '../errors/catalog.ts';
import { parseBody } from './validate.ts';

const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
const TRANSLATION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
/** OpenAI's limit on a speech's input. */
export const SPEECH_INPUT_MAX = 4096;

const bool = z.enum(['true', 'false']);
const temperature = z.coerce.number().min(0).max(1);

const transcriptionFields = z.looseObject({
  model: z.string().min(1),
  language: z.string().min(1).max(32).optional(),
  prompt: z.string().optional(),
  response_format: z.enum(TRANSCRIPTION_FORMATS).optional(),
  temperature: temperature.optional(),
  stream: bool.optional(),
  'timestamp_granularities[]': z.array(z.enum(['word', 'segment'])).optional(),
  'include[]': z.array(z.enum(['logprobs'])).optional(),
});

const translationFields = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().optional(),
  response_format: z.enum(TRANSLATION_FORMATS).optional(),
  temperature: temperature.optional(),
});

export interface AudioFields {
  model: string;
  prompt: string;
  stream: boolean;
}

/** The multipart fields as one object: a name ending in [] (and any repeated name) is a list. */
function fieldObject(fields: ReadonlyArray<readonly [string, string]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of fields) {
    const had = out[name];
    if (name.endsWith('[]')) out[name] = [...((had as string[] | undefined) ?? []), value];
    else if (had !== undefined) throw new GatewayError('invalid_request', `The field ${name} is given more than once.`, { param: name });
    else out[name] = value;
  }
  return out;
}

export function audioFields(fields: ReadonlyArray<readonly [string, string]>, operation: 'transcriptions' | 'translations'): AudioFields {
  const o = fieldObject(fields);
  if (operation === 'translations' && o.stream !== undefined) {
    throw new GatewayError('invalid_request', 'Translations are not streamed: send no stream field.', { param: 'stream' });
  }
  const parsed = parseBody(operation === 'transcriptions' ? transcriptionFields : translationFields, o);
  return { model: parsed.model, prompt: parsed.prompt ?? '', stream: (parsed as { stream?: string }).stream === 'true' };
}

export const speechBody = z.looseObject({
  model: z.string().min(1),
  input: z.string().min(1).max(SPEECH_INPUT_MAX),
  voice: z.union([z.string().min(1), z.looseObject({ id: z.string().min(1) })]),
  instructions: z.string().max(SPEECH_INPUT_MAX).optional(),
  response_format: z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']).optional(),
  speed: z.number().min(0.25).max(4).optional(),
  stream_format: z.enum(['sse', 'audio']).optional(),
});
