// The floor: the least a Node proxy can do (fastify 5 + undici, as the gateway uses), with no auth, no limits,
// no accounting. Forwards POST /v1/* to UPSTREAM (ends in /v1) and streams the answer back as it comes.
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

const upstream = process.env.UPSTREAM ?? 'http://127.0.0.1:9/v1';
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });
const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });
// The body goes upstream as the client sent it: no parse, no re-serialization.
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

app.post('/v1/*', async (req, reply) => {
  const res = await request(upstream + req.url.slice(3), {
    method: 'POST',
    body: req.body as Buffer,
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
  });
  void reply.code(res.statusCode).header('content-type', res.headers['content-type'] ?? 'application/json');
  return reply.send(res.body);
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${(app.server.address() as AddressInfo).port}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
