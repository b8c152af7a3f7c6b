// The console's keys page and key expiry (README: Keys, expiry and rotation), through HTTP (fastify inject) on the
// standalone backend with a clock the test moves: the Create form enforces the account's keyPolicy (the message names
// it); the list shows age and expiry and highlights keys older than 90 days or expiring within 14; Rotate keeps the
// grace period unless the old key expires first (the earlier wins); the new key is accepted by the gateway's store.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminTokenAuth } from '../../console/auth/admin-token.ts';
import { MemorySessions } from '../../console/auth/sessions.ts';
import { MemorySignInLimit } from '../../console/auth/sign-in-limit.ts';
import { MemoryPublisher } from '../../console/keys/publisher.ts';
import { MemoryRegistry } from '../../console/keys/registry.ts';
import { StandaloneKeys } from '../../console/keys/standalone-backend.ts';
import { consolePlugin } from '../../console/server/plugin.ts';
import { MemoryUsageSource } from '../../console/usage/memory-source.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { hashKey } from '../../gateway/contract/keys.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { account, plan } from '../helpers/manifests.ts';

const TOKEN = 'expiry-console-admin-token-0123456789';
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 2, 9, 0, 0);
let clock = T0;
let app: FastifyInstance;
let store: MemoryStore;
let session: string;

beforeAll(async () => {
  const docs = [
    plan('builder', { tier: 2 }),
    account('strict', 'builder', { keyPolicy: { maxKeyAgeDays: 90, requireExpiry: true } }),
    account('relaxed', 'builder'),
  ];
  const c = compile(parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc }))).set, { pepper: 'p' });
  store = new MemoryStore(new MemoryUsageSink(), { now: () => clock });
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
  const auth = new AdminTokenAuth(TOKEN);
  app = Fastify();
  await app.register(
    consolePlugin({
      authn: auth,
      authz: auth,
      keys,
      sessions: new MemorySessions(),
      signInLimit: new MemorySignInLimit(),
      now: () => clock,
      exampleModel: 'm',
      usage: new MemoryUsageSource(async () => []),
    }),
  );
  await signIn();
});

afterAll(async () => {
  await app?.close();
});

/** Signs in (again: a session ends after hours of the console's clock, which the test moves by days). */
async function signIn(): Promise<void> {
  const login = await app.inject({ method: 'GET', url: '/dashboard/login', headers: { host: '127.0.0.1' } });
  const pre = /svc_console_login=([^;]+)/.exec(String(login.headers['set-cookie']))?.[1] as string;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(login.body)?.[1] as string;
  const r = await app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { host: '127.0.0.1', cookie: `svc_console_login=${pre}` },
    payload: { _csrf: csrf, token: TOKEN, next: '/dashboard/keys' },
  });
  session = String(r.headers['set-cookie']).split(';')[0] as string;
}

async function page(acct: string): Promise<string> {
  const get = async (): Promise<{ statusCode: number; body: string }> =>
    app.inject({ method: 'GET', url: `/dashboard/keys?account=${acct}`, headers: { host: '127.0.0.1', cookie: session } });
  let r = await get();
  if (r.statusCode === 303) {
    await signIn();
    r = await get();
  }
  expect(r.statusCode).toBe(200);
  return r.body;
}

async function post(url: string, form: Record<string, string>): Promise<{ status: number; body: string }> {
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page(form.account as string))?.[1] as string;
  const r = await app.inject({ method: 'POST', url, headers: { host: '127.0.0.1', cookie: session }, payload: { _csrf: csrf, ...form } });
  return { status: r.statusCode, body: r.body };
}

/** The table row of one key, as text without markup. */
function rowOf(html: string, name: string): string {
  const m = new RegExp(`<tr[^>]*><th scope="row">${name}</th>[\\s\\S]*?</tr>`).exec(html);
  return (m?.[0] ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
}

describe('keys page and key expiry', () => {
  it('refuses a key without expiry where the keyPolicy requires one, and one longer than maxKeyAgeDays, naming the policy', async () => {
    const none = await post('/dashboard/keys', { account: 'strict', name: 'ci' });
    expect(none.status).toBe(422);
    expect(none.body).toContain('This account&#39;s keyPolicy.requireExpiry: enter after how many days the key expires (at most 90).');
    const long = await post('/dashboard/keys', { account: 'strict', name: 'ci', expiresInDays: '91' });
    expect(long.body).toContain('This account&#39;s keyPolicy.maxKeyAgeDays allows at most 90 days.');
    expect(await page('strict')).toContain('Required by this account&#39;s key policy: at most 90 days.');
  });

  it('shows age and expiry; highlights a key expiring within 14 days and one older than 90 days, in words', async () => {
    const made = await post('/dashboard/keys', { account: 'strict', name: 'ci', expiresInDays: '20' });
    expect(made.status).toBe(201);
    const key = /id="new-key" readonly value="([^"]+)"/.exec(made.body)?.[1] as string;
    expect((await store.findKey(hashKey(key, 'p')))?.expiresAt).toBe(T0 + 20 * DAY);
    await post('/dashboard/keys', { account: 'relaxed', name: 'forever' });

    clock = T0 + 5 * DAY;
    expect(rowOf(await page('strict'), 'ci')).toMatch(/Active .* 5 days 2026-11-22 09:00 UTC /);
    expect(rowOf(await page('strict'), 'ci')).not.toContain('rotate it');
    clock = T0 + 7 * DAY;
    const html = await page('strict');
    expect(html).toMatch(/<tr class="attention"><th scope="row">ci<\/th>/);
    expect(rowOf(html, 'ci')).toContain('Expires in 13 days: rotate it');

    clock = T0 + 91 * DAY;
    const relaxed = await page('relaxed');
    expect(rowOf(relaxed, 'forever')).toContain('91 days Older than 90 days: rotate it no expiry');
    expect(rowOf(await page('strict'), 'ci')).toContain('Expired');
  });

  it('rotates with the grace period, unless the old key expires first: the earlier wins', async () => {
    clock = T0 + 200 * DAY;
    await post('/dashboard/keys', { account: 'strict', name: 'bot', expiresInDays: '10' });
    clock = T0 + 207 * DAY; // 3 days left, the grace period is 7
    const r = await post('/dashboard/keys/rotate', { account: 'strict', name: 'bot', grace: '7d' });
    expect(r.status).toBe(201);
    expect(r.body).toContain('Key bot stops at 2027-05-31 09:00 UTC, when it expires: before the 7 days grace period ends.');
    expect(rowOf(r.body, 'bot')).toContain('Active, revoked at 2027-05-31 09:00 UTC (rotated)');
    // The successor lives as long as the old key did (10 days), from now.
    expect(rowOf(r.body, 'bot-2')).toMatch(/Active .* 2027-06-07 09:00 UTC/);
  });
});
