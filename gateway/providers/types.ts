// What every provider offers the pipeline: send one request in its own wire protocol, report the outcome.
import type { CompiledTarget } from '../contract/snapshot.ts';
import type { EncodedForm } from '../translate/multipart-encode.ts';

/**
 * The wire protocol a provider speaks, which picks the translators (gateway/translate/select.ts). Clouds reuse the two
 * first where they carry them (Azure OpenAI: openai; Claude on Bedrock Invoke and on Vertex rawPredict: anthropic);
 * converse is Bedrock's Converse API, gemini the generateContent API of Vertex and the Gemini API.
 */
export type Protocol = 'openai' | 'anthropic' | 'converse' | 'gemini';
export type Operation = 'chat' | 'embeddings' | 'messages' | 'count_tokens' | 'responses' | 'completions' | 'rerank' | 'moderations' | 'images' | 'image_edits';

export interface UpstreamCall {
  target: CompiledTarget;
  operation: Operation;
  /** Serialized request body in the provider's protocol (bytes when spliced on the client's: raw-splice.ts). */
  body: string | Buffer;
  /** A multipart form sent instead of `body` (an image edit; only the OpenAI-protocol providers take one). */
  form?: EncodedForm;
  stream: boolean;
  /** Protocol headers passed through (anthropic-version, anthropic-beta). */
  headers: Record<string, string>;
  signal: AbortSignal;
}

/** A request body as text (providers that read or reshape it; only OpenAI-protocol bodies are ever bytes). */
export function bodyText(body: string | Buffer): string {
  return typeof body === 'string' ? body : body.toString('utf8');
}

/** The secrets the request's auth headers carried (gateway/providers/scrub.ts), read only when an error text is scrubbed. */
export type SentSecrets = () => string[];

export type UpstreamOutcome =
  | { kind: 'json'; status: number; body: string }
  | { kind: 'stream'; status: number; body: AsyncIterable<Uint8Array | string>; sent?: SentSecrets }
  | { kind: 'error'; status: number; body: string; retryAfter: string | undefined; sent?: SentSecrets };

/**
 * A failure before any answer: the connection could not be made, a timeout struck, or the target's cloud credential
 * could not be obtained (credential_error: the message says why without the credential).
 */
export class UpstreamFailure extends Error {
  readonly reason: 'timeout' | 'connect_error' | 'credential_error';
  constructor(reason: 'timeout' | 'connect_error' | 'credential_error', message: string) {
    super(message);
    this.reason = reason;
  }
}

/** OpenAI's audio endpoints: /audio/transcriptions and /audio/translations (multipart in), /audio/speech (JSON in). */
export type AudioOperation = 'transcriptions' | 'translations' | 'speech';

export interface AudioUpstreamCall {
  target: CompiledTarget;
  operation: AudioOperation;
  /** The upstream request's body, made anew for each attempt (a multipart body streams the upload's kept chunks). */
  body: () => AsyncIterable<Uint8Array> | string;
  contentType: string;
  /** The body's length in bytes (sent as content-length). */
  length: number;
  /** What the gateway read from the request: the in-process mock answers from it, HTTP providers send `body`. */
  facts: AudioCallFacts;
  signal: AbortSignal;
}

export interface AudioCallFacts {
  /** The multipart fields as sent upstream (transcriptions, translations). */
  fields?: ReadonlyArray<readonly [string, string]>;
  /** The audio's length in seconds (transcriptions, translations). */
  seconds?: number;
  /** The JSON body as sent upstream (speech). */
  json?: Readonly<Record<string, unknown>>;
}

/** An audio answer, whatever its content type (JSON, text, SRT, VTT, an event stream, audio bytes), passed on as it comes. */
export type AudioOutcome =
  | { kind: 'answer'; status: number; contentType: string; body: AsyncIterable<Uint8Array | string> }
  | { kind: 'error'; status: number; body: string; retryAfter: string | undefined; sent?: SentSecrets };

export interface Provider {
  /** The audio endpoints, on the kinds that serve them (openai, azure-openai, mock). */
  audio?(call: AudioUpstreamCall): Promise<AudioOutcome>;
  /** The protocol of every target of this kind, unless protocolFor says otherwise for one target. */
  readonly protocol: Protocol;
  /**
   * A kind whose targets speak different protocols (Bedrock: Claude through Invoke speaks anthropic, the other models
   * Converse; Vertex: Claude through rawPredict speaks anthropic, Gemini generateContent gemini).
   */
  protocolFor?(target: CompiledTarget): Protocol;
  send(call: UpstreamCall): Promise<UpstreamOutcome>;
  close(): Promise<void>;
}

/** The protocol one target speaks (picks its translators). */
export function protocolOf(provider: Provider, target: CompiledTarget): Protocol {
  return provider.protocolFor ? provider.protocolFor(target) : provider.protocol;
}

/** Every secret string of a target's credential (to scrub from upstream error texts). */
export function credentialSecrets(target: CompiledTarget, env: NodeJS.ProcessEnv = process.env): string[] {
  const c = target.credential;
  if (c.kind === 'bundle') {
    try {
      return Object.values(JSON.parse(c.value) as Record<string, string>).filter((v) => typeof v === 'string');
    } catch {
      return [];
    }
  }
  const v = credentialValue(target, env);
  return v === undefined ? [] : [v];
}

export function credentialValue(target: CompiledTarget, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const c = target.credential;
  switch (c.kind) {
    case 'none':
      return undefined;
    case 'value':
      return c.value;
    case 'env':
      return env[c.name];
    case 'bundle':
    case 'ambient':
      return undefined;
    default: {
      const never: never = c;
      return never;
    }
  }
}
