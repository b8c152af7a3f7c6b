// Refuses a call that carries no key, or a malformed one, before its body is read (an onRequest hook): a client
// with no valid key cannot make the gateway buffer up to the body limit. The answer closes the connection, since
// the unread body is still on it.
import type { onRequestHookHandler } from 'fastify';
import type { Dialect } from '../errors/catalog.ts';
import { wellFormedKey } from '../pipeline/authenticate.ts';

export function keyFirst(dialect: Dialect): onRequestHookHandler {
  return (req, reply, done) => {
    try {
      wellFormedKey(req.headers, dialect);
    } catch (err) {
      void reply.header('connection', 'close');
      done(err as Error);
      return;
    }
    done();
  };
}
