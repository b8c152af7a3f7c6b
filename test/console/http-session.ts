// A signed-in client of an in-process console (fastify inject, no browser): signs in as the form does, then sends
// pages and form posts with the session cookie and the page's CSRF token.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';

export interface Answer {
  status: number;
  location: string | undefined;
  body: string;
}

export interface HttpSession {
  /** The Set-Cookie of the sign-in. */
  setCookie: string;
  get(url: string): Promise<Answer>;
  /** A form post with the session's CSRF token. */
  post(url: string, form: Record<string, string>): Promise<Answer>;
}

const HOST = '127.0.0.1:8080';

export async function signInHttp(app: FastifyInstance, token: string): Promise<HttpSession> {
  const login = await app.inject({ method: 'GET', url: '/dashboard/login', headers: { host: HOST } });
  const pre = /svc_console_login=([^;]+)/.exec(String(login.headers['set-cookie']))?.[1] as string;
  const loginCsrf = /name="_csrf" value="([^"]+)"/.exec(login.body)?.[1] as string;
  const r = await app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { host: HOST, cookie: `svc_console_login=${pre}` },
    payload: { _csrf: loginCsrf, token, next: '/dashboard/keys' },
  });
  expect(r.statusCode, r.body).toBe(303);
  const setCookie = String(r.headers['set-cookie'] ?? '');
  const cookie = setCookie.split(';')[0] as string;
  const answer = (x: { statusCode: number; headers: Record<string, unknown>; body: string }): Answer => ({
    status: x.statusCode,
    location: x.headers.location as string | undefined,
    body: x.body,
  });
  const get = async (url: string): Promise<Answer> => answer(await app.inject({ method: 'GET', url, headers: { host: HOST, cookie } }));
  const keys = await get('/dashboard/keys');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(keys.body)?.[1] as string;
  return {
    setCookie,
    get,
    post: async (url, form) => answer(await app.inject({ method: 'POST', url, headers: { host: HOST, cookie }, payload: { _csrf: csrf, ...form } })),
  };
}
