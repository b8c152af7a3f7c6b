// The few Stripe API calls billing makes, through Stripe's official library (`stripe`): the API version pinned (the
// one this library release is typed for), network retries with an idempotency key on every POST (so a retry never
// makes a second session, price or link), a timeout. stripe-mock answers them in the tests (test/billing-stripe/),
// checking each request against Stripe's OpenAPI spec; STRIPE_API_BASE points the library at it.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import type { StripeSettings } from '../settings.ts';

/** The Stripe API version every request names (Stripe-Version), pinned with the library's exact version in package.json. */
export const STRIPE_API_VERSION = Stripe.API_VERSION;

/** Stripe's secret, restricted and webhook keys (and a Bearer header), which an error message may echo back. */
const STRIPE_SECRETS = /(?<=Authorization was ')[^']*|\b(?:(?:sk|rk)_(?:test|live)_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/=]+)|\bBearer\s+\S+/g;

/** The message with every Stripe key in it replaced: it is shown on pages and written to logs. */
export function withoutStripeSecrets(message: string): string {
  return message.replace(STRIPE_SECRETS, '[REDACTED]');
}

export class StripeError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(withoutStripeSecrets(message));
    this.status = status;
  }
}

export interface CheckoutSession {
  id: string;
  url: string;
}
export interface PaymentLink {
  id: string;
  url: string;
}

export interface StripeClientOptions {
  timeoutMs?: number;
  /** Retries of a failed connection, a 409, 429 or 5xx, with backoff (Stripe's library; default 2). */
  maxNetworkRetries?: number;
}

export class StripeClient {
  readonly stripe: Stripe;

  constructor(settings: StripeSettings, o: StripeClientOptions = {}) {
    const base = new URL(settings.apiBase);
    const https = base.protocol === 'https:';
    this.stripe = new Stripe(settings.secretKey, {
      apiVersion: STRIPE_API_VERSION,
      host: base.hostname,
      port: base.port || (https ? 443 : 80),
      protocol: https ? 'https' : 'http',
      maxNetworkRetries: o.maxNetworkRetries ?? 2,
      timeout: o.timeoutMs ?? 10_000,
      telemetry: false,
      appInfo: { name: 'svc-gateway' },
    });
  }

  /** Runs one call of Stripe's library; its errors become a StripeError with Stripe's status and message. */
  async call<T>(what: string, fn: (s: Stripe) => Promise<T>): Promise<T> {
    try {
      return await fn(this.stripe);
    } catch (err) {
      if (err instanceof Stripe.errors.StripeConnectionError) throw new StripeError(0, `Stripe could not be reached: ${err.message}`);
      if (err instanceof Stripe.errors.StripeError) {
        const status = err.statusCode ?? (err instanceof Stripe.errors.StripeAuthenticationError ? 401 : 502);
        throw new StripeError(status, `Stripe refused ${what}: ${err.message}`);
      }
      throw err;
    }
  }

  /** A Checkout Session paying `cents` USD of credits for `account` (payment methods as enabled in Stripe). */
  async createCheckoutSession(o: { account: string; cents: number; successUrl: string; cancelUrl: string }): Promise<CheckoutSession> {
    const s = await this.call('/v1/checkout/sessions', (x) =>
      x.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: o.account,
          success_url: o.successUrl,
          cancel_url: o.cancelUrl,
          line_items: [
            { quantity: 1, price_data: { currency: 'usd', unit_amount: o.cents, product_data: { name: `svc-gateway credits (account ${o.account})` } } },
          ],
          metadata: { account: o.account },
          payment_intent_data: { metadata: { account: o.account } },
        },
        { idempotencyKey: randomUUID() },
      ),
    );
    if (typeof s.id !== 'string' || typeof s.url !== 'string') throw new StripeError(502, 'Stripe returned a Checkout Session without an id or url');
    return { id: s.id, url: s.url };
  }

  /**
   * A Payment Link for regional wallets (and cards): the customer chooses the amount (a custom-amount Price), and the
   * account rides along as metadata and as ?client_reference_id= on the URL, which Checkout puts on the session.
   */
  async createPaymentLink(account: string): Promise<PaymentLink> {
    const price = await this.call('/v1/prices', (x) =>
      x.prices.create(
        {
          currency: 'usd',
          custom_unit_amount: { enabled: true, minimum: 500, maximum: 1_000_000 },
          product_data: { name: `svc-gateway credits (account ${account})` },
          metadata: { account },
        },
        { idempotencyKey: `svc-price-${account}` },
      ),
    );
    if (typeof price.id !== 'string') throw new StripeError(502, 'Stripe returned a Price without an id');
    const link = await this.call('/v1/payment_links', (x) =>
      x.paymentLinks.create(
        { line_items: [{ price: price.id, quantity: 1 }], metadata: { account }, payment_intent_data: { metadata: { account } } },
        { idempotencyKey: `svc-link-${account}` },
      ),
    );
    if (typeof link.id !== 'string' || typeof link.url !== 'string') throw new StripeError(502, 'Stripe returned a Payment Link without an id or url');
    const url = new URL(link.url);
    url.searchParams.set('client_reference_id', account);
    return { id: link.id, url: url.toString() };
  }
}
