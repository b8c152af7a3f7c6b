// The audio endpoints: POST /v1/audio/transcriptions and /v1/audio/translations (multipart/form-data, read as it
// arrives with its bounds: gateway/audio/upload.ts) and POST /v1/audio/speech (JSON). The key is checked before an
// upload is read; the upload is checked (size, format by its magic bytes, length from its own header) before any
// upstream call or hold; the answer is passed on as it comes (gateway/audio/run.ts).
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { audioFacts } from '../audio/duration.ts';
import { multipartBody } from '../audio/multipart.ts';
import { runAudio, type AudioSink, type AudioSpec, type ByteWriter } from '../audio/run.ts';
import { MIME, type AudioFormat } from '../audio/sniff.ts';
import { readUpload, type AudioUpload } from '../audio/upload.ts';
import { authenticate } from '../pipeline/authenticate.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { keyCacheOf } from '../pipeline/key-cache.ts';
import { audioFields, speechBody } from './audio-schemas.ts';
import { watchClient } from './client-watch.ts';
import { corsHeaders } from './cors.ts';
import { keyFirst } from './key-first.ts';
import { parseBody } from './validate.ts';

/** The filename's extension the upstream reads the format from (OpenAI does). */
const EXTENSION: Record<AudioFormat, string> = { wav: 'wav', flac: 'flac', mp3: 'mp3', ogg: 'ogg', mp4: 'm4a', webm: 'webm' };

export function audioRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  void app.register(async (scope) => {
    // The upload is left unread by the body parser: the handler reads it as it arrives (readUpload).
    scope.addContentTypeParser('multipart/form-data', (_req, _payload, done) => done(null));
    scope.post('/v1/audio/transcriptions', { onRequest: keyFirst('openai') }, (req, reply) => upload(deps, req, reply, 'transcriptions'));
    scope.post('/v1/audio/translations', { onRequest: keyFirst('openai') }, (req, reply) => upload(deps, req, reply, 'translations'));
  });

  app.post('/v1/audio/speech', { onRequest: keyFirst('openai') }, async (req, reply) => {
    const body = parseBody(speechBody, req.body);
    const spec: AudioSpec = {
      endpoint: 'audio.speech',
      operation: 'speech',
      modelType: 'speech',
      modelId: body.model,
      stream: body.stream_format === 'sse',
      taskType: null,
      demand: { kind: 'speech', characters: [...body.input].length, inputBytes: Buffer.byteLength(body.input) + Buffer.byteLength(body.instructions ?? '') },
      request: (target) => {
        const json = { ...body, model: target.upstreamModel };
        const text = JSON.stringify(json);
        return { contentType: 'application/json', length: Buffer.byteLength(text), body: () => text, facts: { json } };
      },
    };
    return serveAudio(deps, req, reply, spec);
  });
}

async function upload(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, operation: 'transcriptions' | 'translations'): Promise<FastifyReply> {
  let up: AudioUpload;
  try {
    // A key that is not one of ours makes the gateway read no upload.
    await authenticate(req.headers, 'openai', deps.store, deps.pepper, keyCacheOf(deps.store));
    up = await readUpload(req.raw, req.headers['content-type'], undefined, deps.spool);
  } catch (err) {
    // Part of the request is still on the connection: it is closed after the answer.
    if (!req.raw.readableEnded) void reply.header('connection', 'close');
    throw err;
  }
  // The upload (a temporary file when large) is let go when the call ends, whatever ended it.
  try {
    return await transcribe(deps, req, reply, operation, up);
  } finally {
    await up.file.data.release();
  }
}

async function transcribe(
  deps: GatewayDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  operation: 'transcriptions' | 'translations',
  { fields, file }: AudioUpload,
): Promise<FastifyReply> {
  const f = audioFields(fields, operation);
  const facts = await audioFacts(file);
  const spec: AudioSpec = {
    endpoint: operation === 'transcriptions' ? 'audio.transcriptions' : 'audio.translations',
    operation,
    modelType: 'transcription',
    modelId: f.model,
    stream: f.stream,
    taskType: null,
    demand: { kind: 'transcription', billedSeconds: facts.billedSeconds, promptBytes: Buffer.byteLength(f.prompt) },
    request: (target) => {
      const sent = fields.map(([k, v]): [string, string] => [k, k === 'model' ? target.upstreamModel : v]);
      const body = multipartBody(sent, file, `audio.${EXTENSION[facts.format]}`, MIME[facts.format]);
      return { ...body, facts: { fields: sent, seconds: facts.seconds } };
    },
  };
  return serveAudio(deps, req, reply, spec);
}

async function serveAudio(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: AudioSpec): Promise<FastifyReply> {
  const client = watchClient(reply.raw);
  try {
    await runAudio(deps, spec, req.headers, client.signal, bytesSink(reply));
  } finally {
    client.dispose();
  }
  return reply;
}

function bytesSink(reply: FastifyReply): AudioSink {
  return {
    headers: (h) => void reply.headers(h),
    start: (status, h) => {
      reply.hijack();
      const earlier: Record<string, string | number | string[]> = {};
      for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) earlier[k] = v;
      reply.raw.writeHead(status, { ...corsHeaders(), ...earlier, ...h, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      return byteWriter(reply.raw);
    },
  };
}

function byteWriter(res: ServerResponse): ByteWriter {
  return {
    get destroyed() {
      return res.destroyed;
    },
    write: (chunk) => {
      if (res.destroyed || res.write(chunk)) return null;
      return new Promise((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
    end: () => {
      if (!res.destroyed) res.end();
    },
  };
}
