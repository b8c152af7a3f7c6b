// Billing settings from the environment: STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and, for a local Stripe in tests,
// STRIPE_API_BASE (http(s)://host:port). Without the first two, the billing page says payments are not set up and the
// webhook answers 503 (Stripe retries it later).
export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** Stripe's API, without a trailing slash: https://api.stripe.com unless STRIPE_API_BASE says otherwise. */
  apiBase: string;
}

export class SettingsError extends Error {}

export function stripeSettings(env: Record<string, string | undefined>): StripeSettings | null {
  const secretKey = env.STRIPE_SECRET_KEY?.trim();
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET?.trim();
  const base = env.STRIPE_API_BASE?.trim();
  if (base && !/^https?:\/\/[A-Za-z0-9.[\]:-]+(:\d{1,5})?\/?$/.test(base)) {
    throw new SettingsError(`STRIPE_API_BASE must be http(s)://host:port, got ${JSON.stringify(base)}`);
  }
  if (!secretKey || !webhookSecret) return null;
  return { secretKey, webhookSecret, apiBase: (base || 'https://api.stripe.com').replace(/\/$/, '') };
}
