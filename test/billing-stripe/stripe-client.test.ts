// The Stripe client against stripe-mock, which checks every request against Stripe's OpenAPI spec: the Checkout
// Session and the Payment Link the billing page makes are requests Stripe accepts; a wrong one is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripeSettings, SettingsError } from '../../billing/settings.ts';
import { STRIPE_API_VERSION, StripeClient, StripeError } from '../../billing/payments/stripe-client.ts';
import { startStripeMock, type StripeMock } from './stripe-mock.ts';

let mock: StripeMock;
beforeAll(async () => {
  mock = await startStripeMock();
});
afterAll(async () => {
  await mock?.stop();
});

const client = (key = 'sk_test_123'): StripeClient => new StripeClient({ secretKey: key, webhookSecret: 'whsec_x', apiBase: mock.url });

describe('Stripe client (stripe-mock)', () => {
  it("pins the API version of the library's release (package.json pins the release)", () => {
    expect(STRIPE_API_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}\.[a-z]+$/);
    expect(client().stripe.getApiField('version')).toBe(STRIPE_API_VERSION);
  });

  it('creates a Checkout Session (mode payment, the account as client_reference_id, cents) and a Payment Link', async () => {
    const s = await client().createCheckoutSession({ account: 'demo', cents: 2550, successUrl: 'http://127.0.0.1/ok', cancelUrl: 'http://127.0.0.1/no' });
    expect(s.id).toMatch(/^cs_/);
    expect(s.url).toMatch(/^https:\/\//);
    const link = await client().createPaymentLink('demo');
    expect(link.id).toMatch(/^plink_/);
    expect(new URL(link.url).searchParams.get('client_reference_id')).toBe('demo');
  });

  it('surfaces Stripe refusals: a parameter Stripe does not know, and a missing key', async () => {
    const unknown = { mode: 'payment', no_such_parameter: 1 } as unknown as Parameters<StripeClient['stripe']['checkout']['sessions']['create']>[0];
    await expect(client().call('/v1/checkout/sessions', (s) => s.checkout.sessions.create(unknown))).rejects.toMatchObject({ status: 400 });
    await expect(client().call('/v1/checkout/sessions', (s) => s.checkout.sessions.create(unknown))).rejects.toThrow(StripeError);
    await expect(
      client('not a key').createCheckoutSession({ account: 'demo', cents: 500, successUrl: 'http://x/', cancelUrl: 'http://x/' }),
    ).rejects.toMatchObject({
      status: 401,
    });
  });

  it('never echoes the secret key in its errors (shown on the billing page and logged)', async () => {
    for (const key of ['sk_test_mistyped zq9x', 'notakey zq8y', 'sk_live_']) {
      const err = await client(key)
        .createCheckoutSession({ account: 'demo', cents: 500, successUrl: 'http://x/', cancelUrl: 'http://x/' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StripeError);
      const message = (err as StripeError).message;
      expect(message).toMatch(/^Stripe refused/);
      for (const part of key.split(' ')) expect(message).not.toContain(part);
    }
  });

  it('reads the settings: both secrets or nothing; STRIPE_API_BASE must be http(s)://host:port', () => {
    expect(stripeSettings({})).toBeNull();
    expect(stripeSettings({ STRIPE_SECRET_KEY: 'sk_test_1' })).toBeNull();
    expect(stripeSettings({ STRIPE_SECRET_KEY: 'sk_test_1', STRIPE_WEBHOOK_SECRET: 'whsec_1' })).toEqual({
      secretKey: 'sk_test_1',
      webhookSecret: 'whsec_1',
      apiBase: 'https://api.stripe.com',
    });
    expect(stripeSettings({ STRIPE_SECRET_KEY: 'k', STRIPE_WEBHOOK_SECRET: 'w', STRIPE_API_BASE: 'http://127.0.0.1:12111/' })?.apiBase).toBe(
      'http://127.0.0.1:12111',
    );
    expect(() => stripeSettings({ STRIPE_API_BASE: 'ftp://x' })).toThrow(SettingsError);
  });
});
