// A model endpoint's handler body: the pipeline run for one request, its client watched, its answer through the
// reply. Errors thrown before the answer starts reach the dialect's error handler (errors.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { runCall, type CallSpec } from '../pipeline/call.ts';
import type { GatewayDeps } from '../pipeline/context.ts';
import { watchClient } from './client-watch.ts';
import { replySink } from './reply-sink.ts';

export async function serveCall(deps: GatewayDeps, req: FastifyRequest, reply: FastifyReply, spec: CallSpec): Promise<FastifyReply> {
  const client = watchClient(reply.raw);
  if (deps.tracer) spec.body = req.body;
  try {
    await runCall(deps, spec, req.headers, client.signal, replySink(reply));
  } finally {
    client.dispose();
  }
  return reply;
}
