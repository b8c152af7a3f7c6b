// POST /billing/stripe/webhook as its own encapsulated plugin: the body is read raw (the signature is over its exact
// bytes), no session or CSRF (Stripe signs instead), at most 256 KiB. Without payments set up it answers 503.
import type { FastifyInstance } from 'fastify';
import type { BillingBackend } from '../backend.ts';
import { StripeWebhook } from './webhook.ts';

export function billingWebhookPlugin(b: BillingBackend, opts: { now?: () => number } = {}): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 256 * 1024 }, (_req, body, done) => done(null, body));
    const hook = b.webhookSecret
      ? new StripeWebhook({
          ledger: b.ledger,
          webhookSecret: b.webhookSecret,
          now: opts.now ?? Date.now,
          knownAccount: (a) => b.accountExists(a),
          log: (level, message, fields) => app.log[level](fields, message),
          // Postgres is a copy: a failed copy is logged and made whole by the next event of the account.
          onAccountTouched: async (account) => {
            await b.copyToPostgres?.(account).catch((err: unknown) => app.log.warn({ err, account }, 'Billing entries not copied to Postgres yet'));
          },
        })
      : null;
    app.addHook('onClose', async () => {
      await b.close?.();
    });
    app.post('/billing/stripe/webhook', async (req, reply) => {
      if (!hook) return reply.code(503).send({ error: 'payments are not set up (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET)' });
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const header = req.headers['stripe-signature'];
      const a = await hook.handle(raw, Array.isArray(header) ? header[0] : header);
      return reply.code(a.status).send(a.body);
    });
  };
}
