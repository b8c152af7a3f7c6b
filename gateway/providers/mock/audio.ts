// The mock provider's audio endpoints, deterministic: a transcription (or translation) of any clip says the same
// sentence, in every response_format, streamed as transcript.text.delta events when asked; speech is a tone (wav,
// pcm) or silence (mp3) of a length that grows with the input, streamed as audio bytes or speech.audio.* events.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AudioOutcome, AudioUpstreamCall } from '../types.ts';
import { pcmTone, silentMp3, wavFile } from './audio-bytes.ts';

export const MOCK_TRANSCRIPT = 'Hello from the svc-gateway demo.';
const WORDS = MOCK_TRANSCRIPT.split(' ');
const SPEECH_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', pcm: 'audio/pcm' };
const CHUNK = 4096;

const error = (status: number, message: string, param: string | null = null): AudioOutcome => ({
  kind: 'error',
  status,
  body: JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } }),
  retryAfter: undefined,
});

async function* pieces(items: ReadonlyArray<string | Buffer>, delayMs: number, signal: AbortSignal): AsyncIterable<Uint8Array | string> {
  for (const [i, item] of items.entries()) {
    if (i > 0 && delayMs > 0) await sleep(delayMs, undefined, { signal });
    yield item;
  }
}

const clock = (s: number, sep: string): string => {
  const ms = Math.round(s * 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${sep}${pad(ms % 1000, 3)}`;
};

export async function mockAudio(call: AudioUpstreamCall, delayMs: number): Promise<AudioOutcome> {
  if (call.operation === 'speech') return speech(call, delayMs);
  const fields = new Map(call.facts.fields ?? []);
  const seconds = call.facts.seconds ?? 1;
  const billed = Math.max(1, Math.ceil(seconds));
  const format = fields.get('response_format') ?? 'json';
  const task = call.operation === 'translations' ? 'translate' : 'transcribe';
  if (fields.get('stream') === 'true') {
    const audioTokens = billed * 10;
    const events = WORDS.map((w, i) => `data: ${JSON.stringify({ type: 'transcript.text.delta', delta: i === 0 ? w : ` ${w}` })}\n\n`);
    const usage = {
      type: 'tokens',
      input_tokens: audioTokens,
      input_token_details: { text_tokens: 0, audio_tokens: audioTokens },
      output_tokens: WORDS.length,
      total_tokens: audioTokens + WORDS.length,
    };
    events.push(`data: ${JSON.stringify({ type: 'transcript.text.done', text: MOCK_TRANSCRIPT, usage })}\n\n`);
    return { kind: 'answer', status: 200, contentType: 'text/event-stream', body: pieces(events, delayMs, call.signal) };
  }
  const usage = { type: 'duration', seconds: billed };
  const end = Math.round(seconds * 100) / 100;
  switch (format) {
    case 'text':
      return { kind: 'answer', status: 200, contentType: 'text/plain; charset=utf-8', body: pieces([`${MOCK_TRANSCRIPT}\n`], 0, call.signal) };
    case 'srt':
      return {
        kind: 'answer',
        status: 200,
        contentType: 'text/plain; charset=utf-8',
        body: pieces([`1\n${clock(0, ',')} --> ${clock(end, ',')}\n${MOCK_TRANSCRIPT}\n\n`], 0, call.signal),
      };
    case 'vtt':
      return {
        kind: 'answer',
        status: 200,
        contentType: 'text/vtt; charset=utf-8',
        body: pieces([`WEBVTT\n\n${clock(0, '.')} --> ${clock(end, '.')}\n${MOCK_TRANSCRIPT}\n\n`], 0, call.signal),
      };
    case 'verbose_json': {
      const step = end / WORDS.length;
      const words = WORDS.map((word, i) => ({ word, start: Math.round(i * step * 100) / 100, end: Math.round((i + 1) * step * 100) / 100 }));
      const segment = {
        id: 0,
        seek: 0,
        start: 0,
        end,
        text: ` ${MOCK_TRANSCRIPT}`,
        tokens: [50364, 2425, 50414],
        temperature: 0,
        avg_logprob: -0.2,
        compression_ratio: 0.9,
        no_speech_prob: 0.01,
      };
      const body = {
        task,
        language: 'english',
        duration: end,
        text: MOCK_TRANSCRIPT,
        segments: [segment],
        ...(fields.has('timestamp_granularities[]') ? { words } : {}),
        usage,
      };
      return json(body, call.signal);
    }
    default:
      return json({ text: MOCK_TRANSCRIPT, usage }, call.signal);
  }
}

function json(body: object, signal: AbortSignal): AudioOutcome {
  return { kind: 'answer', status: 200, contentType: 'application/json', body: pieces([JSON.stringify(body)], 0, signal) };
}

function speech(call: AudioUpstreamCall, delayMs: number): AudioOutcome {
  const body = call.facts.json ?? {};
  const input = typeof body.input === 'string' ? body.input : '';
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
  const type = SPEECH_TYPES[format];
  if (!type) return error(400, `The mock provider speaks mp3, wav and pcm, not ${format}.`, 'response_format');
  const seconds = Math.min(2, Math.max(0.25, [...input].length * 0.05));
  const samples = pcmTone(seconds);
  const audio = format === 'mp3' ? silentMp3(seconds) : format === 'wav' ? wavFile(samples, 24_000) : samples;
  const chunks: Buffer[] = [];
  for (let i = 0; i < audio.length; i += CHUNK) chunks.push(audio.subarray(i, i + CHUNK));
  if (body.stream_format === 'sse') {
    const inputTokens = Math.ceil(Buffer.byteLength(input) / 4);
    const outputTokens = Math.ceil(seconds * 20);
    const events = chunks.map((c) => `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: c.toString('base64') })}\n\n`);
    events.push(
      `data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens } })}\n\n`,
    );
    return { kind: 'answer', status: 200, contentType: 'text/event-stream', body: pieces(events, delayMs, call.signal) };
  }
  return { kind: 'answer', status: 200, contentType: type, body: pieces(chunks, delayMs, call.signal) };
}
