import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, Keyring, keyFromPepper, keyringFromEnv, sealBytes, sealSnapshot, unsealBytes, unsealSnapshot } from './sealed-credentials.ts';
import type { Snapshot } from './snapshot.ts';

const target = (name: string, value: string): Snapshot['models'][string]['targets'][number] => ({
  name,
  provider: 'openai',
  baseUrl: 'https://api.example/v1',
  upstreamModel: 'm',
  credential: { kind: 'value', value },
  weight: 1,
  timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, totalMs: 1 },
  mock: null,
});
const snap: Snapshot = {
  schema: 1,
  version: 'v1',
  plans: {},
  accounts: {},
  models: {
    gpt: {
      id: 'gpt',
      type: 'chat',
      minTier: 0,
      inputNanoPerToken: 1,
      outputNanoPerToken: 1,
      maxOutputTokens: 10,
      fallbacks: [],
      targets: [target('a', 'sk-live-AAAA'), target('b', 'sk-live-BBBB'), { ...target('c', ''), credential: { kind: 'env', name: 'X' } }],
    } as Snapshot['models'][string],
  },
};
const hex = (): string => randomBytes(32).toString('hex');

describe('sealed upstream credentials', () => {
  it('seals every clear value, deterministically, and unseals it back', () => {
    const ring = new Keyring([randomBytes(32)]);
    const sealed = sealSnapshot(snap, ring);
    expect(JSON.stringify(sealed)).not.toContain('sk-live-');
    expect(sealed.models.gpt?.targets.map((t) => t.credential.kind === 'value' && isSealed(t.credential.value))).toEqual([true, true, false]);
    expect(sealSnapshot(snap, ring)).toEqual(sealed);
    expect(sealSnapshot(sealed, ring)).toEqual(sealed);
    expect(sealed.version).toBe('v1');
    expect(unsealSnapshot(sealed, ring)).toEqual(snap);
  });

  it('binds a sealed value to its target and refuses an altered one', () => {
    const ring = new Keyring([randomBytes(32)]);
    const sealed = sealSnapshot(snap, ring);
    const [a, b] = sealed.models.gpt?.targets ?? [];
    const swapped = structuredClone(sealed);
    (swapped.models.gpt as { targets: unknown[] }).targets = [{ ...a, credential: b?.credential }, b];
    expect(() => unsealSnapshot(swapped, ring)).toThrow(/gpt\/a does not verify/);
    expect(() => unsealSnapshot(sealed, null)).toThrow(/no SVC_CONFIG_KEY/);
  });

  it('rotates: "new,old" unseals what either sealed and seals with new; a ring without the key says which key it lacks', () => {
    const [oldKey, newKey] = [hex(), hex()];
    const old = keyringFromEnv({ SVC_CONFIG_KEY: oldKey }) as Keyring;
    const both = keyringFromEnv({ SVC_CONFIG_KEY: `${newKey},${oldKey}` }) as Keyring;
    const fresh = keyringFromEnv({ SVC_CONFIG_KEY: newKey }) as Keyring;
    expect(unsealSnapshot(sealSnapshot(snap, old), both)).toEqual(snap);
    expect(unsealSnapshot(sealSnapshot(snap, both), fresh)).toEqual(snap);
    expect(() => unsealSnapshot(sealSnapshot(snap, old), fresh)).toThrow(new RegExp(`sealed with key ${old.current}, which is not in SVC_CONFIG_KEY`));
  });

  it('derives the key from the pepper without SVC_CONFIG_KEY, and refuses a key of the wrong size', () => {
    const ring = keyringFromEnv({ SVC_KEY_PEPPER: 'pepper' }) as Keyring;
    expect(unsealSnapshot(sealSnapshot(snap, ring), new Keyring([keyFromPepper('pepper')]))).toEqual(snap);
    expect(keyringFromEnv({})).toBeNull();
    expect(() => keyringFromEnv({ SVC_CONFIG_KEY: 'abcd' })).toThrow(/32 bytes/);
    expect(keyringFromEnv({ SVC_CONFIG_KEY: randomBytes(32).toString('base64') })).toBeInstanceOf(Keyring);
  });
});

describe('sealBytes', () => {
  const ring = new Keyring([randomBytes(32)]);
  const plain = Buffer.concat([Buffer.from('{"custom_id":"a"}\n'), randomBytes(1000)]);

  it('round-trips bytes, none of them in clear', () => {
    const sealed = sealBytes(ring, plain, 'file/acme/f1/0');
    expect(sealed.length).toBe(plain.length + 32);
    expect(sealed.includes(Buffer.from('custom_id'))).toBe(false);
    expect(unsealBytes(ring, sealed, 'file/acme/f1/0').equals(plain)).toBe(true);
    expect(unsealBytes(ring, sealBytes(ring, Buffer.alloc(0), 'x'), 'x').length).toBe(0);
  });

  it('refuses bytes moved to another place, altered, truncated, or sealed with a key not in the ring', () => {
    const sealed = sealBytes(ring, plain, 'file/acme/f1/0');
    expect(() => unsealBytes(ring, sealed, 'file/rival/f1/0')).toThrow(/do not verify/);
    const altered = Buffer.from(sealed);
    altered[20] = (altered[20] ?? 0) ^ 1;
    expect(() => unsealBytes(ring, altered, 'file/acme/f1/0')).toThrow(/do not verify/);
    expect(() => unsealBytes(ring, sealed.subarray(0, 20), 'file/acme/f1/0')).toThrow(/truncated/);
    expect(() => unsealBytes(new Keyring([randomBytes(32)]), sealed, 'file/acme/f1/0')).toThrow(/not in SVC_CONFIG_KEY/);
  });

  it('unseals with a rotated ring whose second key sealed them', () => {
    const old = randomBytes(32);
    const sealed = sealBytes(new Keyring([old]), plain, 'a');
    expect(unsealBytes(new Keyring([randomBytes(32), old]), sealed, 'a').equals(plain)).toBe(true);
  });
});
