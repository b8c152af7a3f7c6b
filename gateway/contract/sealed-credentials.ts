// Upstream credentials never sit in Redis in clear: the publisher (operator, or a standalone process publishing its
// manifests) seals each `credential.value` of the compiled snapshot with AES-256-GCM before writing it; gateways
// unseal it when they load the snapshot. The snapshot's shape and version do not change (the version is the hash of
// the compiled config, credentials in clear): a sealed value is still `{ kind: 'value', value }` (or a whole Secret's
// `{ kind: 'bundle', value }`), with
//
//   value = "svc-sealed:v1:<kid>:<base64url(iv | ciphertext | tag)>"
//
// kid names the key (8 hex of a hash of it); the associated data is "<model id>/<target name>" (an McpServer's
// header: "mcp/<server>/<header>"), so a sealed value cannot be moved to another target. The IV is derived from
// the key, the associated data and the plaintext (as in AES-GCM-SIV): the same config sealed twice gives the same
// bytes, so publishing stays idempotent.
//
// Keys: SVC_CONFIG_KEY, one or more comma-separated 32-byte keys (64 hex characters, or base64), the first seals and
// every one unseals, which is how a key is rotated (docs/security.md "Upstream credentials at rest"). Without SVC_CONFIG_KEY
// the key is derived (HKDF-SHA-256) from SVC_KEY_PEPPER, which every process that publishes or serves already shares.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { Snapshot } from './snapshot.ts';

export const SEALED_PREFIX = 'svc-sealed:v1:';

interface Key {
  id: string;
  bytes: Buffer;
}

export class Keyring {
  private readonly keys: Key[];

  constructor(keys: Buffer[]) {
    if (keys.length === 0) throw new Error('a keyring needs at least one key');
    this.keys = keys.map((bytes) => {
      if (bytes.length !== 32) throw new Error('SVC_CONFIG_KEY: each key must be 32 bytes (64 hex characters, or base64 of 32 bytes)');
      return { id: createHash('sha256').update('svc-config-key-id\0').update(bytes).digest('hex').slice(0, 8), bytes };
    });
  }

  /** The key that seals (the first one). */
  get current(): string {
    return (this.keys[0] as Key).id;
  }

  /** The key that seals, for sealBytes. */
  sealingKey(): { id: string; bytes: Buffer } {
    const k = this.keys[0] as Key;
    return { id: k.id, bytes: k.bytes };
  }

  /** A key of the ring by its id, for unsealBytes. */
  key(id: string): Buffer | null {
    return this.keys.find((x) => x.id === id)?.bytes ?? null;
  }

  seal(plain: string, aad: string): string {
    const k = this.keys[0] as Key;
    const iv = createHmac('sha256', k.bytes).update('iv\0').update(aad).update('\0').update(plain).digest().subarray(0, 12);
    const c = createCipheriv('aes-256-gcm', k.bytes, iv);
    c.setAAD(Buffer.from(aad));
    const data = Buffer.concat([iv, c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
    return `${SEALED_PREFIX}${k.id}:${data.toString('base64url')}`;
  }

  /** The clear value; throws a readable Error when no key of this ring sealed it or it was altered. */
  unseal(sealed: string, aad: string): string {
    const rest = sealed.slice(SEALED_PREFIX.length);
    const i = rest.indexOf(':');
    const kid = rest.slice(0, i);
    const k = this.keys.find((x) => x.id === kid);
    if (i < 0 || !k)
      throw new Error(
        `the credential of ${aad} is sealed with key ${kid || '?'}, which is not in SVC_CONFIG_KEY (keys here: ${this.keys.map((x) => x.id).join(', ')})`,
      );
    const data = Buffer.from(rest.slice(i + 1), 'base64url');
    if (data.length < 28) throw new Error(`the sealed credential of ${aad} is truncated`);
    const d = createDecipheriv('aes-256-gcm', k.bytes, data.subarray(0, 12));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(data.subarray(data.length - 16));
    try {
      return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]).toString('utf8');
    } catch (err) {
      throw new Error(`the sealed credential of ${aad} does not verify (altered, or sealed for another target)`, { cause: err });
    }
  }
}

/**
 * Bytes sealed with the keyring's first key (a stored file's chunk): `kid (4 bytes) | iv (12) | ciphertext | tag (16)`,
 * bound to `aad`. A random IV: unlike the snapshot's values, a chunk need not seal to the same bytes twice.
 */
export function sealBytes(ring: Keyring, plain: Buffer, aad: string): Buffer {
  const { id, bytes } = ring.sealingKey();
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', bytes, iv);
  c.setAAD(Buffer.from(aad));
  return Buffer.concat([Buffer.from(id, 'hex'), iv, c.update(plain), c.final(), c.getAuthTag()]);
}

/** The clear bytes of sealBytes; throws when no key of the ring sealed them, or they were altered or moved. */
export function unsealBytes(ring: Keyring, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < 32) throw new Error(`the sealed bytes of ${aad} are truncated`);
  const kid = sealed.subarray(0, 4).toString('hex');
  const k = ring.key(kid);
  if (!k) throw new Error(`the bytes of ${aad} are sealed with key ${kid}, which is not in SVC_CONFIG_KEY`);
  const d = createDecipheriv('aes-256-gcm', k, sealed.subarray(4, 16));
  d.setAAD(Buffer.from(aad));
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  try {
    return Buffer.concat([d.update(sealed.subarray(16, sealed.length - 16)), d.final()]);
  } catch (err) {
    throw new Error(`the sealed bytes of ${aad} do not verify (altered, or sealed for another file)`, { cause: err });
  }
}

function parseKey(s: string): Buffer {
  const t = s.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  if (b.length !== 32) throw new Error('SVC_CONFIG_KEY: each key must be 32 bytes (64 hex characters, or base64 of 32 bytes), e.g. `openssl rand -hex 32`');
  return b;
}

/** The key derived from the pepper when SVC_CONFIG_KEY is not set. */
export function keyFromPepper(pepper: string): Buffer {
  return Buffer.from(hkdfSync('sha256', pepper, 'svc-gateway', 'config-credentials-v1', 32));
}

/** SVC_CONFIG_KEY (comma-separated: the first seals, all unseal), else a key derived from SVC_KEY_PEPPER; null if neither. */
export function keyringFromEnv(env: Record<string, string | undefined>): Keyring | null {
  const list = (env.SVC_CONFIG_KEY ?? '').split(',').filter((x) => x.trim() !== '');
  if (list.length > 0) return new Keyring(list.map(parseKey));
  return env.SVC_KEY_PEPPER ? new Keyring([keyFromPepper(env.SVC_KEY_PEPPER)]) : null;
}

export const isSealed = (value: string): boolean => value.startsWith(SEALED_PREFIX);

function mapValues(snap: Snapshot, f: (value: string, aad: string) => string): Snapshot {
  const models = Object.fromEntries(
    Object.entries(snap.models).map(([id, m]) => [
      id,
      {
        ...m,
        targets: m.targets.map((t) =>
          t.credential.kind === 'value' || t.credential.kind === 'bundle'
            ? { ...t, credential: { kind: t.credential.kind, value: f(t.credential.value, `${id}/${t.name}`) } }
            : t,
        ),
      },
    ]),
  );
  const guarded = sealGuardrails(snap, f);
  if (!snap.mcpServers) return { ...snap, models, ...guarded };
  // An McpServer's header values, bound to "mcp/<server>/<header>" so none can be moved to another server; its OAuth
  // client secret to "mcp/<server>/oauth" (no header is named that: header names cannot hold a slash).
  const mcpServers = Object.fromEntries(
    Object.entries(snap.mcpServers).map(([name, s]) => [
      name,
      {
        ...s,
        headers: s.headers.map((h) =>
          h.credential.kind === 'value' ? { ...h, credential: { kind: 'value' as const, value: f(h.credential.value, `mcp/${name}/${h.name}`) } } : h,
        ),
        ...(s.oauth && s.oauth.clientSecret.kind === 'value'
          ? { oauth: { ...s.oauth, clientSecret: { kind: 'value' as const, value: f(s.oauth.clientSecret.value, `mcp/${name}/oauth`) } } }
          : {}),
      },
    ]),
  );
  return { ...snap, models, mcpServers, ...guarded };
}

/** A Guardrail's remote check credentials, bound to "guardrail/<guardrail>/<check>". */
function sealGuardrails(snap: Snapshot, f: (value: string, aad: string) => string): Pick<Snapshot, 'guardrails'> | object {
  if (!snap.guardrails?.some((g) => g.remote)) return {};
  const guardrails = snap.guardrails.map((g) =>
    g.remote
      ? {
          ...g,
          remote: g.remote.map((c) =>
            c.credential.kind === 'value' || c.credential.kind === 'bundle'
              ? { ...c, credential: { kind: c.credential.kind, value: f(c.credential.value, `guardrail/${g.name}/${c.name}`) } }
              : c,
          ),
        }
      : g,
  );
  return { guardrails };
}

/** The snapshot with every clear credential value sealed (values sealed already are kept). */
export function sealSnapshot(snap: Snapshot, ring: Keyring): Snapshot {
  return mapValues(snap, (v, aad) => (isSealed(v) ? v : ring.seal(v, aad)));
}

/** The snapshot with every sealed value in clear; throws a readable Error if one cannot be unsealed. */
export function unsealSnapshot(snap: Snapshot, ring: Keyring | null): Snapshot {
  return mapValues(snap, (v, aad) => {
    if (!isSealed(v)) return v;
    if (!ring) throw new Error(`the credential of ${aad} is sealed and this process has no SVC_CONFIG_KEY or SVC_KEY_PEPPER`);
    return ring.unseal(v, aad);
  });
}
