// The pipeline's CallSink over a fastify reply: a JSON answer through fastify, a stream written to the raw response
// (hijacked: fastify steps aside) with back-pressure.
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { CallSink, StreamWriter } from '../pipeline/sink.ts';
import { corsHeaders } from './cors.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' };

export function replySink(reply: FastifyReply): CallSink {
  return {
    headers: (h) => void reply.headers(h),
    json: (status, h, body) => void reply.code(status).headers(h).type('application/json').send(body),
    stream: (h) => {
      reply.hijack();
      // Headers the pipeline set before (x-svc-key-expires-in) go out with the stream too.
      reply.raw.writeHead(200, { ...corsHeaders(), ...earlier(reply), ...h, ...SSE_HEADERS });
      return responseWriter(reply.raw);
    },
  };
}

/** The headers set on the reply so far, as writeHead takes them. */
function earlier(reply: FastifyReply): Record<string, string | number | string[]> {
  const out: Record<string, string | number | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) out[k] = v;
  return out;
}

function responseWriter(res: ServerResponse): StreamWriter {
  return {
    get destroyed() {
      return res.destroyed;
    },
    write: (text) => {
      if (text === '' || res.destroyed || res.write(text)) return null;
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
    end: (text) => {
      if (!res.destroyed) res.end(text);
    },
  };
}
