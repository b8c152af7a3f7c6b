// The console's HTTP rules without a browser (fastify inject), and what two console replicas share through a real
// Redis: sessions (sign in on one, signed in on the other; sign out on one, out on both) and the sign-in limit; the
// key actions' refusals (400, 404, 409) on the standalone backend.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { AdminTokenAuth } from '../../console/auth/admin-token.ts';
import { MemorySessions, RedisSessions, type SessionStore } from '../../console/auth/sessions.ts';
import { MemorySignInLimit, RedisSignInLimit, type SignInLimit } from '../../console/auth/sign-in-limit.ts';
import { MemoryPublisher } from '../../console/keys/publisher.ts';
import { MemoryRegistry } from '../../console/keys/registry.ts';
import { StandaloneKeys } from '../../console/keys/standalone-backend.ts';
import { consolePlugin } from '../../console/server/plugin.ts';
import { MemoryUsageSource } from '../../console/usage/memory-source.ts';
import { basics } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { signInHttp, type Answer } from './http-session.ts';

const TOKEN = 'plugin-test-admin-token-0123456789';
let redis: TestRedis;
const apps: FastifyInstance[] = [];

beforeAll(async () => {
  redis = await startRedis('console-plugin');
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await redis?.stop();
});

async function consoleApp(sessions: SessionStore, signInLimit: SignInLimit, onKeys?: (keys: StandaloneKeys) => void): Promise<FastifyInstance> {
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
  onKeys?.(keys);
  const auth = new AdminTokenAuth(TOKEN);
  const app = Fastify();
  await app.register(
    consolePlugin({ authn: auth, authz: auth, keys, sessions, signInLimit, now: Date.now, exampleModel: 'm', usage: new MemoryUsageSource(async () => []) }),
  );
  apps.push(app);
  return app;
}

async function signIn(app: FastifyInstance, host: string, token = TOKEN): Promise<{ status: number; cookie: string }> {
  const page = await app.inject({ method: 'GET', url: '/dashboard/login', headers: { host } });
  const pre = /svc_console_login=([^;]+)/.exec(String(page.headers['set-cookie']))?.[1] as string;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] as string;
  const r = await app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { host, cookie: `svc_console_login=${pre}` },
    payload: { _csrf: csrf, token, next: '/dashboard/keys' },
  });
  return { status: r.statusCode, cookie: String(r.headers['set-cookie'] ?? '') };
}

describe('console HTTP rules', () => {
  it('marks the session cookie Secure except over plain HTTP to loopback, and it holds neither the token nor a key', async () => {
    const app = await consoleApp(new MemorySessions(), new MemorySignInLimit());
    const local = await signIn(app, '127.0.0.1:8080');
    expect(local.cookie).toMatch(/^svc_console=[A-Za-z0-9_-]{43}; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const remote = await signIn(app, 'console.example.com');
    expect(remote.cookie).toMatch(/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    expect(remote.cookie).not.toContain(TOKEN);
  });

  it('refuses a sign-in form without its CSRF cookie, and sends no one to another site after sign-in', async () => {
    const app = await consoleApp(new MemorySessions(), new MemorySignInLimit());
    const r = await app.inject({ method: 'POST', url: '/dashboard/login', payload: { token: TOKEN } });
    expect(r.statusCode).toBe(403);
    const page = await app.inject({ method: 'GET', url: '/dashboard/login?next=//evil.example.com/x' });
    expect(page.body).toContain('name="next" value="/dashboard/keys"');
  });
});

describe('console key actions, standalone: 4xx, never a 500, and nothing changed', () => {
  it('refuses a name that is no key name (400), a key of another account (404), a revoked key (409)', async () => {
    let keys: StandaloneKeys | undefined;
    const app = await consoleApp(new MemorySessions(), new MemorySignInLimit(), (k) => (keys = k));
    const admin = await signInHttp(app, TOKEN);
    expect((await admin.post('/dashboard/keys', { account: 'acme', name: 'done' })).status).toBe(201);
    expect((await admin.post('/dashboard/keys/revoke', { account: 'acme', name: 'done', confirm: 'done' })).status).toBe(200);
    const state = async (): Promise<unknown> => Promise.all(['acme', 'hobby'].map(async (a) => (await keys?.list(a, 0, 50, 0))?.rows));
    const before = await state();
    const cases: Array<[string, () => Promise<Answer>, number]> = [
      ['revoke page, a sub-resource', () => admin.get('/dashboard/keys/revoke?account=acme&name=builder-key%2Fstatus'), 400],
      ['rotate page, a space', () => admin.get('/dashboard/keys/rotate?account=acme&name=builder%20key'), 400],
      [
        'revoke, a sub-resource',
        () => admin.post('/dashboard/keys/revoke', { account: 'acme', name: 'builder-key/status', confirm: 'builder-key/status' }),
        400,
      ],
      ['rotate, a path', () => admin.post('/dashboard/keys/rotate', { account: 'acme', name: '../free-key', grace: 'now' }), 400],
      ["revoke page, another account's key", () => admin.get('/dashboard/keys/revoke?account=acme&name=free-key'), 404],
      ["rotate page, another account's key", () => admin.get('/dashboard/keys/rotate?account=acme&name=free-key'), 404],
      ['rotate page, no such key', () => admin.get('/dashboard/keys/rotate?account=acme&name=nothing'), 404],
      ["revoke, another account's key", () => admin.post('/dashboard/keys/revoke', { account: 'acme', name: 'free-key', confirm: 'free-key' }), 404],
      ["rotate, another account's key", () => admin.post('/dashboard/keys/rotate', { account: 'acme', name: 'free-key', grace: 'now' }), 404],
      ['revoke, no such key', () => admin.post('/dashboard/keys/revoke', { account: 'acme', name: 'nothing', confirm: 'nothing' }), 404],
      ['rotate, a revoked key', () => admin.post('/dashboard/keys/rotate', { account: 'acme', name: 'done', grace: 'now' }), 409],
    ];
    for (const [what, send, status] of cases) {
      const a = await send();
      expect([what, a.status], a.body).toEqual([what, status]);
      expect(a.body).toContain('role="alert"');
    }
    expect(await state()).toEqual(before);
  });
});

describe('two console replicas on one Redis', () => {
  it('share sessions: signed in on one, signed in on the other; signed out on one, out on both', async () => {
    const [a, b] = await Promise.all(
      [1, 2].map(() => consoleApp(new RedisSessions(redis.client, redis.prefix), new RedisSignInLimit(redis.client, `${redis.prefix}-s`))),
    );
    const { cookie } = await signIn(a as FastifyInstance, 'console.example.com');
    const session = cookie.split(';')[0] as string;
    const onB = await (b as FastifyInstance).inject({ method: 'GET', url: '/dashboard/keys', headers: { cookie: session } });
    expect(onB.statusCode).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(onB.body)?.[1] as string;
    const out = await (b as FastifyInstance).inject({ method: 'POST', url: '/dashboard/logout', headers: { cookie: session }, payload: { _csrf: csrf } });
    expect(out.statusCode).toBe(303);
    const onA = await (a as FastifyInstance).inject({ method: 'GET', url: '/dashboard/keys', headers: { cookie: session } });
    expect([onA.statusCode, onA.headers.location]).toEqual([303, '/dashboard/login?next=%2Fdashboard%2Fkeys']);
    const sid = session.split('=')[1] as string;
    const everything = await redis.client.keys('*');
    expect(everything.some((k) => k.includes(sid))).toBe(false);
  });

  it('share the sign-in limit: 5 failures spread over both, then both refuse the address', async () => {
    const limit = (): SignInLimit => new RedisSignInLimit(redis.client, `${redis.prefix}-limit`);
    const [a, b] = await Promise.all([1, 2].map(() => consoleApp(new MemorySessions(), limit())));
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await signIn((i % 2 ? a : b) as FastifyInstance, 'h', `wrong-${i}`)).status);
    statuses.push((await signIn(a as FastifyInstance, 'h')).status, (await signIn(b as FastifyInstance, 'h')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});
