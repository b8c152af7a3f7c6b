// The Kubernetes token a user signed in with, kept only so the console can ask the API server again whether it is
// still valid (its Secret deleted, its bound object gone, expired): sealed with AES-256-GCM under a key derived from
// the session id. The session store (memory, Redis) is keyed by the id's SHA-256 and never holds the id itself, so
// what it keeps cannot be opened without the browser's cookie.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const INFO = 'svc-gateway console sign-in token';

function keyOf(sessionId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(sessionId, 'utf8'), Buffer.alloc(0), INFO, 32));
}

export function sealToken(sessionId: string, token: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyOf(sessionId), iv);
  const body = Buffer.concat([c.update(token, 'utf8'), c.final()]);
  return [iv, body, c.getAuthTag()].map((b) => b.toString('base64url')).join('.');
}

/** The token, or null when `sealed` was not sealed under this session id (or was altered). */
export function openToken(sessionId: string, sealed: string): string | null {
  const [iv, body, tag] = sealed.split('.').map((p) => Buffer.from(p, 'base64url'));
  if (!iv || !body || !tag || iv.length !== 12 || tag.length !== 16) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', keyOf(sessionId), iv);
    d.setAuthTag(tag);
    return Buffer.concat([d.update(body), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * When a JWT (a bound ServiceAccount token, an OIDC ID token) stops being valid, from its `exp` claim (ms); null for
 * tokens without one (legacy ServiceAccount tokens, static tokens). Read only after the API server accepted the
 * token, and only to end the session sooner.
 */
export function tokenExpiry(token: string): number | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const exp = (JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) && exp > 0 ? exp * 1000 : null;
  } catch {
    return null;
  }
}
