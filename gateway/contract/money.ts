// Money is integer nano-USD (1e-9 USD) everywhere inside: exact sums, no floats. 2^53 nUSD is ~9 million USD,
// far above any one balance, and Redis' 64-bit INCRBY keeps it exact there too.
export const NANO_PER_USD = 1_000_000_000;
/** Listed prices include the 4% platform fee: the fee share of a listed cost is 4/104 of it. */
const FEE_NUM = 4;
const FEE_DEN = 104;

/** USD as written in a manifest to nano-USD, rounding to the nearest nano (manifests carry decimals). */
export function usdToNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

/** A listed price per million tokens to nano-USD per token (exact for prices with up to 3 decimals). */
export function perMTokToNanoPerToken(usdPerMTok: number): number {
  return Math.round(usdPerMTok * 1000);
}

export function nanoToUsd(nano: number): number {
  return nano / NANO_PER_USD;
}

/** USD for a message, exact and never in exponent notation: 64_000_000 -> "0.064", 999 -> "0.000000999". */
export function usdWords(nano: number): string {
  const n = Math.abs(Math.trunc(nano));
  const decimals = String(n % NANO_PER_USD)
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${nano < 0 ? '-' : ''}${Math.floor(n / NANO_PER_USD)}${decimals ? `.${decimals}` : ''}`;
}

export function costNano(inputTokens: number, outputTokens: number, price: ModelPrice): number {
  return inputTokens * price.inputNanoPerToken + outputTokens * price.outputNanoPerToken;
}

export function feeShareNano(cost: number): number {
  return Math.floor((cost * FEE_NUM) / FEE_DEN);
}

export interface ModelPrice {
  inputNanoPerToken: number;
  outputNanoPerToken: number;
}
