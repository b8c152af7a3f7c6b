// The session cookie: HttpOnly, SameSite=Strict, Path=/dashboard, Secure unless the request came over plain HTTP
// to a loopback address (a browser would drop a Secure cookie there and nobody could sign in to `npm start`).
import type { FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'svc_console';

export function readCookie(req: FastifyRequest, name: string): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

function plainLoopback(req: FastifyRequest): boolean {
  if (req.protocol === 'https') return false;
  const host = req.hostname.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function cookie(req: FastifyRequest, o: { name: string; value: string; path: string; maxAgeSec: number }): string {
  const secure = plainLoopback(req) ? '' : '; Secure';
  return `${o.name}=${o.value}; Path=${o.path}; HttpOnly; SameSite=Strict; Max-Age=${o.maxAgeSec}${secure}`;
}

export function sessionCookie(req: FastifyRequest, id: string, maxAgeSec: number): string {
  return cookie(req, { name: SESSION_COOKIE, value: id, path: '/dashboard', maxAgeSec });
}

export function clearedCookie(req: FastifyRequest): string {
  return sessionCookie(req, '', 0);
}
