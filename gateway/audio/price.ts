// The money of an audio call, in integer nano-USD. Each model is priced in its own units beside tokens: seconds of
// audio (transcription, per minute), characters of input (speech, per million), and tokens where the upstream reports
// them (gpt-4o-transcribe: text and audio input tokens, text output; gpt-4o-mini-tts: text input, audio output).
// The hold is the worst case over the chain, from what the request alone says: the seconds the file holds, the
// input's characters and bytes, the route's maxOutputTokens. The charge is the upstream's report, each unit bounded
// by its hold, else the measured units (estimated tokens are flagged), so it never exceeds the hold.
import type { CompiledModel } from '../contract/snapshot.ts';
import { MAX_AMOUNT } from '../state/store.ts';

/**
 * Audio input tokens per second of audio at most. OpenAI lists gpt-4o-transcribe at about 0.006 USD a minute for
 * 6 USD per million audio tokens (some 17 tokens a second); the bound leaves three times that.
 */
export const AUDIO_TOKENS_PER_SECOND = 50;
/** The estimate when an upstream that bills tokens reported none: about what OpenAI's models report. */
const AUDIO_TOKENS_ESTIMATE_PER_SECOND = 17;
/** Text tokens an upstream adds to the caller's prompt or input (its own instructions): allowed above the bytes. */
const TEXT_SLACK = 64;

export type AudioDemand = { kind: 'transcription'; billedSeconds: number; promptBytes: number } | { kind: 'speech'; characters: number; inputBytes: number };

/** What an upstream reported (any field may be missing). */
export interface AudioUsage {
  seconds?: number;
  inputTokens?: number;
  audioInputTokens?: number;
  outputTokens?: number;
}

export interface AudioUnits {
  seconds: number;
  characters: number;
  textInputTokens: number;
  audioInputTokens: number;
  outputTokens: number;
}

const ZERO: AudioUnits = { seconds: 0, characters: 0, textInputTokens: 0, audioInputTokens: 0, outputTokens: 0 };

function prices(m: CompiledModel): { minute: number; character: number; audioIn: number } {
  const a = m.audio;
  return { minute: a?.nanoPerMinute ?? 0, character: a?.nanoPerCharacter ?? 0, audioIn: a?.audioInputNanoPerToken ?? 0 };
}

function billsTokens(m: CompiledModel): boolean {
  return m.inputNanoPerToken > 0 || m.outputNanoPerToken > 0 || prices(m).audioIn > 0;
}

/** The most of each unit the call can be charged on model `m`. Tokens only on a model that bills them. */
export function unitBounds(m: CompiledModel, d: AudioDemand): AudioUnits {
  const tokens = billsTokens(m);
  if (d.kind === 'transcription') {
    return {
      ...ZERO,
      seconds: d.billedSeconds,
      textInputTokens: tokens ? d.promptBytes + TEXT_SLACK : 0,
      audioInputTokens: tokens ? d.billedSeconds * AUDIO_TOKENS_PER_SECOND : 0,
      outputTokens: tokens ? m.maxOutputTokens : 0,
    };
  }
  return { ...ZERO, characters: d.characters, textInputTokens: tokens ? d.inputBytes + TEXT_SLACK : 0, outputTokens: tokens ? m.maxOutputTokens : 0 };
}

export function unitsCost(m: CompiledModel, u: AudioUnits): number {
  const p = prices(m);
  const cost =
    Math.ceil((u.seconds * p.minute) / 60) +
    u.characters * p.character +
    u.textInputTokens * m.inputNanoPerToken +
    u.audioInputTokens * p.audioIn +
    u.outputTokens * m.outputNanoPerToken;
  return Math.min(cost, MAX_AMOUNT);
}

export interface AudioReservation {
  holdNano: number;
  /** Tokens reserved against the key's TPM: the largest token bound of the chain. */
  tokens: number;
}

export function reserveAudio(chain: readonly CompiledModel[], d: AudioDemand): AudioReservation {
  let holdNano = 0;
  let tokens = 0;
  for (const m of chain) {
    const b = unitBounds(m, d);
    holdNano = Math.max(holdNano, unitsCost(m, b));
    tokens = Math.max(tokens, b.textInputTokens + b.audioInputTokens + b.outputTokens);
  }
  return { holdNano, tokens };
}

export interface AudioCharge {
  units: AudioUnits;
  costNano: number;
  estimated: boolean;
  clamped: boolean;
}

const whole = (x: number | undefined): number | undefined => (x !== undefined && Number.isFinite(x) && x >= 0 ? Math.ceil(x) : undefined);

/** The charge of a served call on model `m`: `servedBytes` is what the answer carried (the estimate's output). */
export function chargeAudio(m: CompiledModel, d: AudioDemand, reported: AudioUsage, servedBytes: number): AudioCharge {
  const b = unitBounds(m, d);
  let clamped = false;
  let estimated = false;
  const bound = (v: number, max: number): number => {
    if (v > max) clamped = true;
    return Math.min(v, max);
  };
  const u: AudioUnits = { ...ZERO };
  if (d.kind === 'transcription') {
    const s = whole(reported.seconds);
    u.seconds = s === undefined ? b.seconds : bound(s, b.seconds);
  } else {
    u.characters = b.characters;
  }
  if (billsTokens(m)) {
    const reportedAny = reported.inputTokens !== undefined || reported.audioInputTokens !== undefined || reported.outputTokens !== undefined;
    if (reportedAny) {
      u.textInputTokens = bound(whole(reported.inputTokens) ?? 0, b.textInputTokens);
      u.audioInputTokens = bound(whole(reported.audioInputTokens) ?? 0, b.audioInputTokens);
      u.outputTokens = bound(whole(reported.outputTokens) ?? 0, b.outputTokens);
    } else {
      estimated = true;
      const textBytes = d.kind === 'transcription' ? d.promptBytes : d.inputBytes;
      u.textInputTokens = Math.min(Math.ceil(textBytes / 4), b.textInputTokens);
      u.audioInputTokens = d.kind === 'transcription' ? Math.min(d.billedSeconds * AUDIO_TOKENS_ESTIMATE_PER_SECOND, b.audioInputTokens) : 0;
      u.outputTokens = Math.min(Math.ceil(servedBytes / 4), b.outputTokens);
    }
  }
  return { units: u, costNano: unitsCost(m, u), estimated, clamped };
}
