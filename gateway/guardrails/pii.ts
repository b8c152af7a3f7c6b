// PII detectors. Card numbers must pass the Luhn check and IBANs their ISO 7064 check (ibantools); phone numbers are
// found and validated by Google's libphonenumber metadata (libphonenumber-js), in international form (+ and the
// country code): a national number without its country cannot be told from an order number. Email and IP addresses
// are shapes, with the checks that rule out look-alikes (a version string is not an IPv4 address: four parts, each
// at most 255; an IPv6 candidate must parse).
import { isIPv6 } from 'node:net';
import { isValidIBAN } from 'ibantools';
import { findPhoneNumbersInText } from 'libphonenumber-js/max';
import type { Detect, Hit } from './types.ts';

const EMAIL = /[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])/g;

export const email: Detect = (text) => (text.includes('@') ? all(text, EMAIL, 'email') : []);

// 13 to 19 digits, in groups split by single spaces or dashes, not inside a longer run of digits.
const CARD = /(?<![\dA-Za-z.,-])\d(?:[ -]?\d){12,18}(?![\dA-Za-z])/g;

export const card: Detect = (text) => {
  if (!/\d{4}/.test(text)) return [];
  const hits: Hit[] = [];
  for (const m of text.matchAll(CARD)) {
    const digits = m[0].replace(/[ -]/g, '');
    if (/^[2-6]/.test(digits) && luhn(digits)) hits.push({ start: m.index, end: m.index + m[0].length, kind: 'card' });
  }
  return hits;
};

export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

// Two letters, two check digits, then 11 to 30 letters or digits, optionally in groups of four split by spaces.
const IBAN = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g;

export const iban: Detect = (text) => {
  const hits: Hit[] = [];
  for (const m of text.matchAll(IBAN)) {
    // The longest valid prefix: a group of words after an IBAN may read as more of it.
    let s = m[0];
    while (s.length >= 15) {
      if (isValidIBAN(s.replace(/ /g, ''))) {
        hits.push({ start: m.index, end: m.index + s.length, kind: 'iban' });
        break;
      }
      const cut = s.lastIndexOf(' ');
      if (cut < 0) break;
      s = s.slice(0, cut);
    }
  }
  return hits;
};

export const phone: Detect = (text) => {
  if (!/\+\s?\d/.test(text)) return [];
  const hits: Hit[] = [];
  for (const f of findPhoneNumbersInText(text)) {
    // Only numbers written with their country code: "+44 20 7946 0958", not a bare national number.
    const plus = text.indexOf('+', f.startsAt);
    if (plus >= 0 && plus < f.endsAt && !/\d/.test(text.slice(f.startsAt, plus)) && f.number.isValid())
      hits.push({ start: plus, end: f.endsAt, kind: 'phone' });
  }
  return hits;
};

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`(?<![\\d.])${OCTET}(?:\\.${OCTET}){3}(?![\\d]|\\.\\d)`, 'g');
const IPV6_CANDIDATE = /(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![0-9A-Fa-f:])/g;

export const ip: Detect = (text) => {
  const hits: Hit[] = [];
  if (/\d\.\d/.test(text)) for (const m of text.matchAll(IPV4)) hits.push({ start: m.index, end: m.index + m[0].length, kind: 'ipv4' });
  if (text.includes(':')) {
    for (const m of text.matchAll(IPV6_CANDIDATE)) {
      if (m[0].length >= 3 && isIPv6(m[0]) && /[0-9A-Fa-f]/.test(m[0])) hits.push({ start: m.index, end: m.index + m[0].length, kind: 'ipv6' });
    }
  }
  return hits;
};

// National identity numbers that carry a check: Spain's DNI and NIE (the control letter), the US SSN's structure
// (no check digit exists: area, group and serial ranges only, and only in the written ddd-dd-dddd form).
const DNI = /(?<![A-Za-z0-9])([XYZ]?)(\d{7,8})-?([A-Z])(?![A-Za-z0-9])/g;
const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';
const SSN = /(?<![\d-])(\d{3})-(\d{2})-(\d{4})(?![\d-])/g;

export const nationalId: Detect = (text) => {
  const hits: Hit[] = [];
  for (const m of text.matchAll(DNI)) {
    const [, prefix = '', num = '', letter] = m;
    if ((prefix === '' && num.length !== 8) || (prefix !== '' && num.length !== 7)) continue;
    const n = Number(String('XYZ'.indexOf(prefix) >= 0 && prefix !== '' ? 'XYZ'.indexOf(prefix) : '') + num);
    if (DNI_LETTERS[n % 23] === letter) hits.push({ start: m.index, end: m.index + m[0].length, kind: prefix ? 'es-nie' : 'es-dni' });
  }
  for (const m of text.matchAll(SSN)) {
    const [, area = '', group = '', serial = ''] = m;
    if (area === '000' || area === '666' || area[0] === '9' || group === '00' || serial === '0000') continue;
    hits.push({ start: m.index, end: m.index + m[0].length, kind: 'us-ssn' });
  }
  return hits;
};

function all(text: string, re: RegExp, kind: string): Hit[] {
  const hits: Hit[] = [];
  for (const m of text.matchAll(re)) hits.push({ start: m.index, end: m.index + m[0].length, kind });
  return hits;
}
