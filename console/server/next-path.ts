// Where the console may send a browser after sign-in: a page of the console on this origin, nothing else (no other
// host, no protocol-relative `//host`, no backslash a browser would read as a slash).
export const DEFAULT_NEXT = '/dashboard/keys';

export function isConsolePath(next: string): boolean {
  // eslint-disable-next-line no-control-regex
  return next.startsWith('/dashboard/') && !next.startsWith('//') && !next.includes('\\') && !/[\u0000-\u001f\u007f]/.test(next);
}

/** The page to go to after sign-in: `next` when it is a console page (a query may give an array: not one). */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && isConsolePath(next) ? next : DEFAULT_NEXT;
}
