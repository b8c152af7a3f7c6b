// A small client for the few Stripe API calls billing makes: form-encoded bodies (Stripe's wire format, nested
// parameters as a[b][0][c]), Bearer auth, an Idempotency-Key on every POST, a timeout. stripe-mock validates these
// requests against Stripe's OpenAPI spec in the tests (test/billing-stripe/).
import { randomUUID } from 'node:crypto';
import type { StripeSettings } from '../settings.ts';

export type FormValue = string | number | boolean | null | undefined | FormValue[] | { [k: string]: FormValue };

/** Stripe's form encoding: {a: {b: [1]}} -> a[b][0]=1 (null and undefined are left out). */
export function formEncode(params: Record<string, FormValue>): string {
  const out = new URLSearchParams();
  const walk = (prefix: string, v: FormValue): void => {
    if (v === null || v === undefined) return;
    if (Array.isArray(v)) v.forEach((x, i) => walk(`${prefix}[${i}]`, x));
    else if (typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(`${prefix}[${k}]`, x);
    else out.append(prefix, String(v));
  };
  for (const [k, v] of Object.entries(params)) walk(k, v);
  return out.toString();
}

export class StripeError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
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

export class StripeClient {
  private readonly s: StripeSettings;
  private readonly timeoutMs: number;

  constructor(settings: StripeSettings, timeoutMs = 10_000) {
    this.s = settings;
    this.timeoutMs = timeoutMs;
  }

  async post<T>(path: string, params: Record<string, FormValue>, idempotencyKey: string = randomUUID()): Promise<T> {
    let r: Response;
    try {
      r = await fetch(`${this.s.apiBase}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.s.secretKey}`,
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': idempotencyKey,
          'stripe-version': '2024-06-20',
        },
        body: formEncode(params),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new StripeError(0, `Stripe could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = await r.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new StripeError(r.status, `Stripe answered ${r.status} with a body that is not JSON`);
    }
    if (!r.ok) {
      const msg = (body as { error?: { message?: string } }).error?.message ?? `HTTP ${r.status}`;
      throw new StripeError(r.status, `Stripe refused ${path}: ${msg}`);
    }
    return body as T;
  }

  /** A Checkout Session paying `cents` USD of credits for `account` (payment methods as enabled in Stripe). */
  async createCheckoutSession(o: { account: string; cents: number; successUrl: string; cancelUrl: string }): Promise<CheckoutSession> {
    const s = await this.post<{ id?: unknown; url?: unknown }>('/v1/checkout/sessions', {
      mode: 'payment',
      client_reference_id: o.account,
      success_url: o.successUrl,
      cancel_url: o.cancelUrl,
      line_items: [
        { quantity: 1, price_data: { currency: 'usd', unit_amount: o.cents, product_data: { name: `svc-gateway credits (account ${o.account})` } } },
      ],
      metadata: { account: o.account },
      payment_intent_data: { metadata: { account: o.account } },
    });
    if (typeof s.id !== 'string' || typeof s.url !== 'string') throw new StripeError(502, 'Stripe returned a Checkout Session without an id or url');
    return { id: s.id, url: s.url };
  }

  /**
   * A Payment Link for regional wallets (and cards): the customer chooses the amount (a custom-amount Price), and the
   * account rides along as metadata and as ?client_reference_id= on the URL, which Checkout puts on the session.
   */
  async createPaymentLink(account: string): Promise<PaymentLink> {
    const price = await this.post<{ id?: unknown }>(
      '/v1/prices',
      {
        currency: 'usd',
        custom_unit_amount: { enabled: true, minimum: 500, maximum: 1_000_000 },
        product_data: { name: `svc-gateway credits (account ${account})` },
        metadata: { account },
      },
      `svc-price-${account}`,
    );
    if (typeof price.id !== 'string') throw new StripeError(502, 'Stripe returned a Price without an id');
    const link = await this.post<{ id?: unknown; url?: unknown }>(
      '/v1/payment_links',
      {
        line_items: [{ price: price.id, quantity: 1 }],
        metadata: { account },
        payment_intent_data: { metadata: { account } },
      },
      `svc-link-${account}`,
    );
    if (typeof link.id !== 'string' || typeof link.url !== 'string') throw new StripeError(502, 'Stripe returned a Payment Link without an id or url');
    const url = new URL(link.url);
    url.searchParams.set('client_reference_id', account);
    return { id: link.id, url: url.toString() };
  }
}
