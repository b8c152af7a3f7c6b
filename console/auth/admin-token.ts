// Standalone sign-in: one admin token (SVC_CONSOLE_TOKEN, or generated at start), compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Authenticator, Authorizer, Principal } from './principal.ts';

export function generateAdminToken(): string {
  return `svc-console-${randomBytes(24).toString('base64url')}`;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export class AdminTokenAuth implements Authenticator, Authorizer {
  readonly mode = 'admin-token' as const;
  // The admin token is the process's own setting: it cannot be withdrawn while the process runs.
  readonly reviewEveryMs = null;
  private readonly expected: Buffer;

  constructor(token: string) {
    if (token.length < 16) throw new Error('The console admin token (SVC_CONSOLE_TOKEN) must be at least 16 characters long.');
    this.expected = digest(token);
  }

  async authenticate(token: string): Promise<Principal | null> {
    // Digests have the same length whatever was typed, so the comparison leaks neither content nor length.
    return timingSafeEqual(digest(token), this.expected) ? { kind: 'admin' } : null;
  }

  async allowed(p: Principal): Promise<boolean> {
    return p.kind === 'admin';
  }
}
