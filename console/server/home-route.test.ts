import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { homeRoute, wantsHtml } from './home-route.ts';

describe('GET /', () => {
  it.each([
    ['Chromium navigating', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8', true],
    ['Firefox navigating', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
    ['XHTML alone', 'application/xhtml+xml', true],
    ['upper case, spaces', ' TEXT/HTML ; q=0.5', true],
    ['curl', '*/*', false],
    ['the OpenAI SDK', 'application/json', false],
    ['no Accept', undefined, false],
    ['html refused (q=0)', 'text/html;q=0, application/json', false],
    ['a lookalike type', 'text/htmlx', false],
  ])('%s: %s -> html %s', (_who, accept, html) => {
    expect(wantsHtml(accept)).toBe(html);
  });

  it('answers a browser with the page of links, and anyone else with the OpenAI-shaped 404', async () => {
    const app = Fastify();
    homeRoute(app, { SVC_DOCS_URL: 'https://docs.example.com/svc-gateway' });
    const page = await app.inject({ url: '/', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers.vary).toBe('Accept');
    for (const href of ['/dashboard', '/status', '/v1/models', '/trust', 'https://docs.example.com/svc-gateway']) expect(page.body).toContain(`href="${href}"`);
    expect(page.body).toContain('href="/status/static/console.css"');
    const api = await app.inject({ url: '/?x=1', headers: { accept: 'application/json' } });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ error: { message: 'No route GET /.', type: 'invalid_request_error', param: null, code: 'not_found' } });
    await app.close();
  });

  it('links the docs only when SVC_DOCS_URL is an http(s) URL', async () => {
    for (const [env, linked] of [
      [{}, false],
      [{ SVC_DOCS_URL: 'javascript:alert(1)' }, false],
      [{ SVC_DOCS_URL: 'http://wiki.internal/gateway' }, true],
    ] as const) {
      const app = Fastify();
      homeRoute(app, env);
      const body = (await app.inject({ url: '/', headers: { accept: 'text/html' } })).body;
      expect(body.includes('>Documentation</a>'), JSON.stringify(env)).toBe(linked);
      expect(body).not.toContain('javascript:');
      await app.close();
    }
  });
});
