// A labelled corpus for the guardrails' built-in detectors: real formats of each kind (generated with their own
// checksums, or taken from the maintainers' example data: libphonenumber's example numbers, ibantools' country
// specifications) and near misses that must pass (order numbers, UUIDs, version strings, card-like numbers that fail
// the Luhn check, IBANs with a wrong check, national numbers without a country code, hashes, dates). Deterministic:
// the same seed makes the same corpus, so a figure in the docs is the figure this prints.
import { electronicFormatIBAN, getCountrySpecifications, isValidIBAN } from 'ibantools';
import examples from 'libphonenumber-js/mobile/examples';
import { getExampleNumber, type CountryCode } from 'libphonenumber-js/max';
import { luhn } from '../../gateway/guardrails/pii.ts';

export type Label = 'secrets' | 'email' | 'phone' | 'card' | 'iban' | 'ip' | 'national-id';

export interface Sample {
  /** The detector that must find it, or null: a near miss no detector may find. */
  label: Label | null;
  /** What it is, for the report ("visa", "uuid"). */
  kind: string;
  text: string;
  /** The value inside `text` the detector must cover (positives). */
  value?: string;
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const HEX = '0123456789abcdef';

const CONTEXTS = [
  (v: string) => `Please use ${v} for this.`,
  (v: string) => `${v}`,
  (v: string) => `config:\n  value: ${v}\n`,
  (v: string) => `"field": "${v}",`,
  (v: string) => `(${v})`,
];

export function corpus(seed = 7, perKind = 60): Sample[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const str = (alphabet: string, n: number): string => Array.from({ length: n }, () => pick([...alphabet])).join('');
  const digits = (n: number): string => str('0123456789', n);
  const out: Sample[] = [];
  const pos = (label: Label, kind: string, value: string, around?: (v: string) => string): void =>
    void out.push({ label, kind, value, text: pick(CONTEXTS)(around ? around(value) : value) });
  const neg = (kind: string, text: string): void => void out.push({ label: null, kind, text });

  for (let i = 0; i < perKind; i++) {
    // Secrets: each format as its issuer writes it.
    pos('secrets', 'aws-access-key', `${pick(['AKIA', 'ASIA'])}${str(UPPER32, 16)}`);
    pos('secrets', 'aws-secret-key', str(ALNUM + '/+', 40), (v) => `aws_secret_access_key = ${v}`);
    pos('secrets', 'github-token', `${pick(['ghp_', 'gho_', 'ghs_', 'ghu_'])}${str(ALNUM, 36)}`);
    pos('secrets', 'github-pat', `github_pat_${str(ALNUM, 22)}_${str(ALNUM, 59)}`);
    pos('secrets', 'gitlab-token', `glpat-${str(ALNUM + '_-', 20)}`);
    pos('secrets', 'slack-token', `xoxb-${digits(12)}-${digits(13)}-${str(ALNUM, 24)}`);
    pos('secrets', 'slack-webhook', `https://hooks.slack.com/services/T${str(UPPER32, 8)}/B${str(UPPER32, 8)}/${str(ALNUM, 24)}`);
    pos('secrets', 'openai-key', `sk-proj-${str(ALNUM + '_-', 20)}T3BlbkFJ${str(ALNUM + '_-', 20)}`);
    pos('secrets', 'anthropic-key', `sk-ant-api03-${str(ALNUM + '_-', 93)}AA`);
    pos('secrets', 'stripe-key', `${pick(['sk', 'rk'])}_live_${str(ALNUM, 99)}`);
    pos('secrets', 'google-api-key', `AIza${str(ALNUM + '_-', 35)}`);
    pos('secrets', 'npm-token', `npm_${str(ALNUM, 36)}`);
    pos('secrets', 'sendgrid-key', `SG.${str(ALNUM + '_-', 22)}.${str(ALNUM + '_-', 43)}`);
    pos('secrets', 'jwt', `eyJhbGciOiJIUzI1NiJ9.eyJ${str(ALNUM, 30)}.${str(ALNUM + '_-', 43)}`);
    pos(
      'secrets',
      'private-key',
      `-----BEGIN ${pick(['RSA ', 'EC ', 'OPENSSH ', ''])}PRIVATE KEY-----\n${str(ALNUM + '+/', 64)}\n${str(ALNUM + '+/', 40)}\n-----END PRIVATE KEY-----`,
    );
    pos(
      'secrets',
      'url-credentials',
      `${pick(['postgres', 'mysql', 'redis', 'https', 'amqp'])}://${str('abcdefghij', 6)}:${str(ALNUM, 16)}@db.internal.example.com`,
      (v) => `${v}:5432/app`,
    );
    pos('secrets', 'huggingface-token', `hf_${str('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 34)}`);
    pos('secrets', 'azure-storage-key', `AccountKey=${str(ALNUM + '+/', 86)}==`, (v) => `DefaultEndpointsProtocol=https;AccountName=acct;${v};`);

    // PII.
    const local = `${str('abcdefghijklmnopqrstuvwxyz', 1 + Math.floor(r() * 8))}${pick(['.', '_', '+', ''])}${str('abcdefghijklmnopqrstuvwxyz0123456789', 2 + Math.floor(r() * 6))}`;
    pos('email', 'email', `${local}@${pick(['example.com', 'mail.example.co.uk', 'corp-mail.example.org', 'example.io'])}`);
    pos('card', pick(['visa', 'mastercard', 'amex', 'discover']), card(r, pick));
    pos('iban', 'iban', iban(r, pick));
    pos('ip', 'ipv4', `${1 + Math.floor(r() * 223)}.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}.${1 + Math.floor(r() * 254)}`);
    pos('ip', 'ipv6', `2001:db8:${str(HEX, 4)}:${str(HEX, 4)}::${str(HEX, 3)}`);
    pos('national-id', 'es-dni', dni(r));

    // Near misses.
    neg('order-number', `Order #${digits(10)} shipped on 2026-11-${10 + Math.floor(r() * 18)}.`);
    neg('uuid', `request ${str(HEX, 8)}-${str(HEX, 4)}-4${str(HEX, 3)}-a${str(HEX, 3)}-${str(HEX, 12)} failed`);
    neg(
      'version',
      `upgrade to v${Math.floor(r() * 20)}.${Math.floor(r() * 20)}.${Math.floor(r() * 20)} or ${Math.floor(r() * 9)}.${Math.floor(r() * 9)}.${Math.floor(r() * 9)}-rc.1`,
    );
    neg('luhn-failing-card', `ref ${luhnFailing(r)}`);
    neg('bad-iban', `account ${badIban(r, pick)}`);
    neg('national-phone', `call ${digits(3)} ${digits(3)} ${digits(4)} tomorrow`);
    neg('sha256', `digest ${str(HEX, 64)}`);
    neg('git-sha', `commit ${str(HEX, 40)}`);
    neg('time', `at 12:${10 + Math.floor(r() * 49)}:${10 + Math.floor(r() * 49)} UTC`);
    neg('localhost-address', `mail root@localhost about it`);
    neg('short-aws-like', `AKIA${str(UPPER32, 12)} is too short`);
    neg('sk-word', `the sk-learn and sk_test words`);
    neg('price', `costs 1,234,567.89 USD`);
    neg('jwt-like', `eyJ alone is not a token`);
  }
  // Phone numbers: libphonenumber's own example mobile number of every country, written internationally.
  for (const cc of Object.keys(examples) as CountryCode[]) {
    const n = getExampleNumber(cc, examples);
    if (n) pos('phone', `phone-${cc}`, n.formatInternational());
  }
  return out;
}

function card(r: () => number, pick: <T>(xs: readonly T[]) => T): string {
  const prefix = pick(['4', '51', '55', '2221', '34', '37', '6011']);
  const len = prefix.startsWith('3') ? 15 : 16;
  let body = prefix;
  while (body.length < len - 1) body += String(Math.floor(r() * 10));
  for (let d = 0; d < 10; d++) {
    if (luhn(body + d)) {
      const n = body + d;
      const sep = pick(['', ' ', '-']);
      return len === 15 ? [n.slice(0, 4), n.slice(4, 10), n.slice(10)].join(sep) : n.match(/.{4}/g)!.join(sep);
    }
  }
  throw new Error('unreachable');
}

function luhnFailing(r: () => number): string {
  for (;;) {
    const n = `4${Array.from({ length: 15 }, () => Math.floor(r() * 10)).join('')}`;
    if (!luhn(n)) return n.match(/.{4}/g)!.join(' ');
  }
}

const SPECS = getCountrySpecifications();
// Countries whose IBAN carries only the ISO 7064 check (a random BBAN is a valid one); others add national checks.
const IBAN_COUNTRIES = ['DE', 'GB', 'NL', 'CH', 'AT', 'IE', 'LU', 'LI', 'GR', 'BG'];

function bban(r: () => number, cc: string): string {
  const spec = SPECS[cc]!;
  const len = (spec.chars ?? 22) - 4;
  // Most registries' BBANs start with letters where their regexp says so; digits satisfy the rest.
  const re = new RegExp(spec.bban_regexp ?? '^[0-9]+$');
  for (let tries = 0; tries < 1000; tries++) {
    const s = Array.from({ length: len }, (_, i) =>
      /\[A-Z\]\{(\d+)\}/.test(spec.bban_regexp ?? '') && i < Number(/\[A-Z\]\{(\d+)\}/.exec(spec.bban_regexp!)![1])
        ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[Math.floor(r() * 26)]
        : String(Math.floor(r() * 10)),
    ).join('');
    if (re.test(s)) return s;
  }
  throw new Error(`no BBAN for ${cc}`);
}

function checkDigits(cc: string, b: string): string {
  const rearranged = `${b}${cc}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let rem = 0;
  for (const ch of rearranged) rem = (rem * 10 + Number(ch)) % 97;
  return String(98 - rem).padStart(2, '0');
}

function iban(r: () => number, pick: <T>(xs: readonly T[]) => T): string {
  const cc = pick(IBAN_COUNTRIES);
  let e = '';
  for (let tries = 0; tries < 500 && !isValidIBAN(e); tries++) {
    const b = bban(r, cc);
    e = `${cc}${checkDigits(cc, b)}${b}`;
  }
  if (!isValidIBAN(e)) throw new Error(`no valid IBAN made for ${cc}`);
  return r() < 0.5 ? e : (electronicFormatIBAN(e) ?? e).replace(/(.{4})/g, '$1 ').trim();
}

function badIban(r: () => number, pick: <T>(xs: readonly T[]) => T): string {
  const cc = pick(IBAN_COUNTRIES);
  const b = bban(r, cc);
  const good = checkDigits(cc, b);
  const wrong = String((Number(good) + 1 + Math.floor(r() * 90)) % 97).padStart(2, '0');
  return `${cc}${wrong === good ? '01' : wrong}${b}`;
}

function dni(r: () => number): string {
  const n = Math.floor(r() * 99_999_999);
  return `${String(n).padStart(8, '0')}${'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}`;
}
