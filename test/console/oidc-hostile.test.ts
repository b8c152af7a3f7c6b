// ID tokens a console must never accept, from a hostile OpenID provider on loopback (test/fakes/hostile-oidc.ts)
// answering the console's real flow (discovery, PKCE, state, nonce, the code exchanged with the client secret): from
// another issuer, for another client, expired, with another sign-in's nonce, `alg: none`, an HMAC keyed with the
// provider's public key, signed by a key it does not publish. Each: a page saying why (401), no session cookie, no
// session on the server. The same harness with an honest token signs the person in, so the refusals are the console's.
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { MappedAccess } from '../../console/auth/access-file.ts';
import { AdminTokenAuth } from '../../console/auth/admin-token.ts';
import { OidcClient } from '../../console/auth/oidc/client.ts';
import { MemoryFlows } from '../../console/auth/oidc/flows.ts';
import { oidcSettingsFromEnv } from '../../console/auth/oidc/settings.ts';
import { MemorySessions } from '../../console/auth/sessions.ts';
import { MemorySignInLimit } from '../../console/auth/sign-in-limit.ts';
import { MemoryPublisher } from '../../console/keys/publisher.ts';
import { MemoryRegistry } from '../../console/keys/registry.ts';
import { StandaloneKeys } from '../../console/keys/standalone-backend.ts';
import { consolePlugin } from '../../console/server/plugin.ts';
import { MemoryUsageSource } from '../../console/usage/memory-source.ts';
import { basics } from '../helpers/manifests.ts';
import { startHostileProvider, type Forgery, type HostileProvider } from '../fakes/hostile-oidc.ts';

let idp: HostileProvider;
let app: FastifyInstance;
let base: string;
let created = 0;

class CountingSessions extends MemorySessions {
  override async create(...args: Parameters<MemorySessions['create']>): ReturnType<MemorySessions['create']> {
    created += 1;
    return super.create(...args);
  }
}

beforeAll(async () => {
  idp = await startHostileProvider();
  const { docs } = basics();
  const c = compile(parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc }))).set, { pepper: 'p' });
  const store = new MemoryStore(new MemoryUsageSink());
  await store.applyConfig(c.snapshot, c.keys);
  const keys = new StandaloneKeys({
    snapshot: c.snapshot,
    configKeys: c.keys,
    pepper: 'p',
    store,
    lastUsed: new MemoryLastUsed(),
    publisher: new MemoryPublisher(store, c.snapshot, c.keys),
    registry: new MemoryRegistry(),
  });
  const settings = oidcSettingsFromEnv({ SVC_CONSOLE_OIDC_ISSUER: idp.issuer, SVC_CONSOLE_OIDC_CLIENT_ID: idp.clientId });
  const client = new OidcClient({ ...(settings as NonNullable<typeof settings>), clientSecret: idp.clientSecret });
  app = Fastify();
  await app.register(
    consolePlugin({
      authn: new AdminTokenAuth('hostile-test-admin-token-0123456789'),
      authz: new MappedAccess({ groups: {}, users: {} }),
      oidc: { client, flows: new MemoryFlows() },
      keys,
      sessions: new CountingSessions(),
      // Every case here is a failed sign-in from 127.0.0.1: a limit that lets them all through.
      signInLimit: new MemorySignInLimit(1000),
      now: Date.now,
      exampleModel: 'm',
      usage: new MemoryUsageSource(async () => []),
    }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await idp?.stop();
});

/** A browser's sign-in, by hand: start, the provider's redirect, the callback with the flow cookie. */
async function signIn(): Promise<{ status: number; body: string; setCookie: string }> {
  const start = await fetch(`${base}/dashboard/login/oidc`, { redirect: 'manual' });
  expect(start.status).toBe(303);
  const flow = /svc_console_oidc=([^;]+)/.exec(start.headers.get('set-cookie') ?? '')?.[1] as string;
  const auth = await fetch(start.headers.get('location') as string, { redirect: 'manual' });
  expect(auth.status).toBe(303);
  const callback = await fetch(auth.headers.get('location') as string, { redirect: 'manual', headers: { cookie: `svc_console_oidc=${flow}` } });
  return { status: callback.status, body: await callback.text(), setCookie: callback.headers.getSetCookie().join('\n') };
}

const REFUSALS: Array<[Forgery, RegExp]> = [
  ['other-issuer', /issued by another provider/],
  ['other-audience', /issued for another client/],
  ['expired', /expired/],
  ['wrong-nonce', /does not belong to this sign-in \(nonce\)/],
  ['alg-none', /signature/],
  ['hmac-public-key', /signature/],
  ['unpublished-key', /signature/],
];

describe('console OIDC: the token field turned off', () => {
  it('leaves only "Sign in with …" on the page, and refuses a token form posted anyway', async () => {
    const settings = oidcSettingsFromEnv({ SVC_CONSOLE_OIDC_ISSUER: idp.issuer, SVC_CONSOLE_OIDC_CLIENT_ID: idp.clientId, SVC_CONSOLE_OIDC_NAME: 'Acme SSO' });
    const token = 'hostile-test-admin-token-0123456789';
    const only = Fastify();
    await only.register(
      consolePlugin({
        authn: new AdminTokenAuth(token),
        authz: new MappedAccess({ groups: {}, users: {} }),
        oidc: { client: new OidcClient(settings as NonNullable<typeof settings>), flows: new MemoryFlows() },
        tokenSignIn: false,
        keys: {} as never,
        sessions: new CountingSessions(),
        signInLimit: new MemorySignInLimit(1000),
        now: Date.now,
        exampleModel: 'm',
        usage: new MemoryUsageSource(async () => []),
      }),
    );
    const page = await only.inject({ method: 'GET', url: '/dashboard/login', headers: { host: '127.0.0.1' } });
    expect(page.body).toContain('Sign in with Acme SSO');
    expect(page.body).not.toContain('Admin token');
    const pre = /svc_console_login=([^;]+)/.exec(String(page.headers['set-cookie']))?.[1] as string;
    const before = created;
    const posted = await only.inject({
      method: 'POST',
      url: '/dashboard/login',
      headers: { host: '127.0.0.1', cookie: `svc_console_login=${pre}` },
      payload: { _csrf: 'x', token, next: '/dashboard/keys' },
    });
    expect(posted.statusCode).toBe(403);
    expect(posted.body).toContain('Signing in with a token is turned off here.');
    expect(String(posted.headers['set-cookie'] ?? '')).not.toMatch(/svc_console=[^;]/);
    expect(created).toBe(before);
    await only.close();
  });
});

describe('console OIDC: forged ID tokens', () => {
  it('signs the person in when the ID token is honest (the harness works)', async () => {
    idp.forgery = 'valid';
    const before = created;
    const r = await signIn();
    expect(r.status, r.body).toBe(200);
    expect(r.setCookie).toMatch(/svc_console=[A-Za-z0-9_-]{20,}; Path=\/dashboard; HttpOnly; SameSite=Strict/);
    expect(created).toBe(before + 1);
  });

  it.each(REFUSALS)('refuses an ID token %s with a clear page and makes no session', async (forgery, message) => {
    idp.forgery = forgery;
    const before = created;
    const r = await signIn();
    expect(r.status).toBe(401);
    expect(r.body).toMatch(/<h1>Sign-in refused<\/h1>/);
    expect(r.body).toMatch(message);
    expect(r.body).toContain('You are not signed in.');
    expect(r.setCookie).not.toMatch(/svc_console=[^;]/);
    expect(created).toBe(before);
  });

  it('answers 400, not a crash, to a return address given twice', async () => {
    const r = await fetch(`${base}/dashboard/login/oidc?next=/dashboard/keys&next=/dashboard/usage`, { redirect: 'manual' });
    expect(r.status).toBe(400);
    expect(await r.text()).toContain('outside the console');
    const login = await fetch(`${base}/dashboard/login?next=/dashboard/keys&next=/dashboard/usage`);
    expect(login.status).toBe(200);
  });

  it('sends the PKCE verifier the provider checks, and none is known to a browser that did not start the sign-in', async () => {
    idp.forgery = 'valid';
    const refusals = idp.pkceRefusals;
    const start = await fetch(`${base}/dashboard/login/oidc`, { redirect: 'manual' });
    const authorize = new URL(start.headers.get('location') as string);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const auth = await fetch(authorize, { redirect: 'manual' });
    const before = created;
    const stranger = await fetch(auth.headers.get('location') as string, { redirect: 'manual' });
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('was not started in this browser');
    expect(created).toBe(before);
    // The console never redeemed the code without its verifier.
    expect(idp.pkceRefusals).toBe(refusals);
  });
});
