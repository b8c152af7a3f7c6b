// The gateway's Mcp-Session-Id carries the session itself: the upstream servers' own session ids, sealed with
// AES-256-GCM under a key derived from the pepper every replica shares, and bound to the caller's key (the key's
// HMAC is the associated data). Any replica can therefore serve any request of a session with no shared lookup,
// a rolling restart loses nothing, and a session id presented with another key does not open: it is unknown (404).
// The upstream ids never reach the client in clear.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** One upstream of a session: its Mcp-Session-Id (null: it keeps none) and the protocol version it agreed to. */
export interface UpstreamSession {
  id: string | null;
  version: string | null;
}

/** What a session id holds: its upstreams by McpServer name. */
export interface McpSession {
  servers: Record<string, UpstreamSession>;
  /** The session's own random id, under which the replicas record its last use (the idle TTL, sessions.ts). */
  sid?: string;
}

const PREFIX = 'svcmcp1.';
/** Longer ids are refused before any decryption (a client cannot make the gateway work on a huge header). */
const MAX_ID_CHARS = 8192;

export class SessionSealer {
  private readonly key: Buffer;

  constructor(pepper: string) {
    this.key = Buffer.from(hkdfSync('sha256', pepper, 'svc-gateway', 'mcp-session-id-v1', 32));
  }

  seal(session: McpSession, keyHash: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(keyHash));
    const data = Buffer.concat([iv, c.update(JSON.stringify(session), 'utf8'), c.final(), c.getAuthTag()]);
    return PREFIX + data.toString('base64url');
  }

  /** The session of an id sealed for this key, or null (not ours, altered, or another key's). */
  open(id: string, keyHash: string): McpSession | null {
    if (!id.startsWith(PREFIX) || id.length > MAX_ID_CHARS) return null;
    const data = Buffer.from(id.slice(PREFIX.length), 'base64url');
    if (data.length < 29) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', this.key, data.subarray(0, 12));
      d.setAAD(Buffer.from(keyHash));
      d.setAuthTag(data.subarray(data.length - 16));
      const plain = Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]).toString('utf8');
      return parseSession(JSON.parse(plain));
    } catch {
      return null;
    }
  }
}

function parseSession(v: unknown): McpSession | null {
  if (typeof v !== 'object' || v === null) return null;
  const servers = (v as { servers?: unknown }).servers;
  if (typeof servers !== 'object' || servers === null) return null;
  const out: Record<string, UpstreamSession> = {};
  for (const [k, u] of Object.entries(servers)) {
    const { id, version } = (u ?? {}) as { id?: unknown; version?: unknown };
    if ((typeof id !== 'string' && id !== null) || (typeof version !== 'string' && version !== null)) return null;
    out[k] = { id, version };
  }
  const sid = (v as { sid?: unknown }).sid;
  if (sid !== undefined && typeof sid !== 'string') return null;
  return sid === undefined ? { servers: out } : { servers: out, sid };
}
