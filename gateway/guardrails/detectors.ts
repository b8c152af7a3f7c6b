// A check's detector, built once per snapshot from what the Guardrail says.
import type { CompiledGuardrail } from '../contract/snapshot.ts';
import { regexDetector, wordsDetector } from './custom.ts';
import { card, email, iban, ip, nationalId, phone } from './pii.ts';
import { highEntropy, secrets } from './secrets.ts';
import type { Detect } from './types.ts';

type Check = CompiledGuardrail['checks'][number];

const BUILT_IN: Record<Exclude<Check['detector'], 'regex' | 'words' | 'secrets'>, Detect> = {
  email,
  phone,
  card,
  iban,
  ip,
  'national-id': nationalId,
};

export function detectorOf(c: Check): Detect {
  switch (c.detector) {
    case 'secrets':
      return c.highEntropy ? (t) => [...secrets(t), ...highEntropy(t)] : secrets;
    case 'regex':
      return regexDetector(c.patterns);
    case 'words':
      return wordsDetector(c.words);
    default:
      return BUILT_IN[c.detector];
  }
}
