// Key actions and sessions of the console in cluster mode, without a browser, on a real kube-apiserver: members of two
// accounts (different Roles) can neither block nor probe each other's key names; a session ends once the token it was
// opened with is withdrawn; Revoke and Rotate answer a bad name, a key of another account, a state conflict and an
// RBAC refusal with their 4xx (never a 500) and change no object.
import { KubeConfig } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesAuth } from '../../console/auth/kubernetes.ts';
import { RedisSessions } from '../../console/auth/sessions.ts';
import { MemorySignInLimit } from '../../console/auth/sign-in-limit.ts';
import { ClusterKeys } from '../../console/keys/cluster-backend.ts';
import { kubeClients } from '../../console/kube/clients.ts';
import { consolePlugin } from '../../console/server/plugin.ts';
import { MemoryUsageSource } from '../../console/usage/memory-source.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { startControlPlane, type ControlPlane } from '../k8s/control-plane.ts';
import { installCrds } from '../k8s/install-crds.ts';
import { createNamespace, kubectl, kubectlOk } from '../k8s/kubectl.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { waitFor } from '../operator/kube-api.ts';
import { accountUser, consoleIdentity, CONSOLE_SA } from './cluster-identity.ts';
import { signInHttp, type HttpSession } from './http-session.ts';
import { redisText } from './secrets.ts';

const API = 'gateway.svc.dev/v1alpha1';
const MANAGE = ['get', 'manage-keys'];
let cp: ControlPlane;
let redis: TestRedis;
let ns: string;
let app: FastifyInstance;
let auth: KubernetesAuth;
/** Moves the console's clock (the session reviews' and the access cache's) forward. */
let skew = 0;
let alice: HttpSession;
let bob: HttpSession;

beforeAll(async () => {
  [cp, redis] = await Promise.all([startControlPlane(), startRedis('console-actions')]);
  await installCrds(cp);
  ns = await createNamespace(cp, 'console-actions');
  const docs = [
    { apiVersion: API, kind: 'Plan', metadata: { name: 'builder' }, spec: { tier: 2 } },
    { apiVersion: API, kind: 'Account', metadata: { name: 'alpha' }, spec: { planRef: 'builder' } },
    { apiVersion: API, kind: 'Account', metadata: { name: 'beta' }, spec: { planRef: 'builder' } },
  ];
  await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }));
  const kubeconfig = await consoleIdentity(cp, ns);
  const [tokenA, tokenB] = await Promise.all([accountUser(cp, ns, 'alice', ['alpha'], MANAGE), accountUser(cp, ns, 'bob', ['beta'], MANAGE)]);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const kube = kubeClients(ns, kc);
  const now = (): number => Date.now() + skew;
  auth = new KubernetesAuth(kube, now);
  app = Fastify();
  await app.register(
    consolePlugin({
      authn: auth,
      authz: auth,
      keys: new ClusterKeys(kube, 'pepper', new MemoryLastUsed()),
      sessions: new RedisSessions(redis.client, redis.prefix),
      signInLimit: new MemorySignInLimit(),
      now,
      exampleModel: 'm',
      usage: new MemoryUsageSource(async () => []),
    }),
  );
  [alice, bob] = await Promise.all([signInHttp(app, tokenA), signInHttp(app, tokenB)]);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await cp?.stop();
  await redis?.stop();
});

interface ApiKeyItem {
  metadata: { name: string; resourceVersion: string };
  spec: { accountRef: string; displayName?: string; revoked?: boolean };
}

async function apiKeys(): Promise<ApiKeyItem[]> {
  return (JSON.parse(await kubectlOk(cp, ['get', 'apikeys', '-n', ns, '-o', 'json'])) as { items: ApiKeyItem[] }).items;
}

/** Every ApiKey with its resourceVersion: equal before and after means nothing was written. */
async function apiKeysState(): Promise<string[]> {
  return (await apiKeys()).map((k) => `${k.metadata.name}@${k.metadata.resourceVersion}`).sort();
}

function create(s: HttpSession, account: string, name: string): ReturnType<HttpSession['post']> {
  return s.post('/dashboard/keys', { account, name });
}

describe('console key names in a cluster, two accounts', () => {
  it("a member of one account cannot block another account's rotation by taking its successor's name", async () => {
    expect((await create(bob, 'beta', 'beta-key')).status).toBe(201);
    expect((await create(alice, 'alpha', 'beta-key-2')).status).toBe(201);
    const squatter = (await apiKeys()).find((k) => k.spec.accountRef === 'alpha' && k.spec.displayName === 'beta-key-2') as ApiKeyItem;
    const rotated = await bob.post('/dashboard/keys/rotate', { account: 'beta', name: 'beta-key', grace: 'now' });
    expect(rotated.status, rotated.body).toBe(201);
    expect(rotated.body).toContain('Key beta-key-2 created');
    const mine = (await apiKeys()).filter((k) => k.spec.accountRef === 'beta');
    expect(mine.map((k) => [k.spec.displayName, k.spec.revoked === true]).sort()).toEqual([
      ['beta-key', true],
      ['beta-key-2', false],
    ]);
    // The other account's key is untouched, and still listed under its name in its account alone.
    expect((await apiKeys()).find((k) => k.metadata.name === squatter.metadata.name)?.metadata.resourceVersion).toBe(squatter.metadata.resourceVersion);
    expect((await alice.get('/dashboard/keys')).body).toContain('beta-key-2');
  });

  it("creating a key named like another account's key answers as for any free name; a duplicate in the same account is refused", async () => {
    expect((await create(bob, 'beta', 'beta-only')).status).toBe(201);
    const before = (await apiKeys()).filter((k) => k.spec.accountRef === 'beta');
    const same = await create(alice, 'alpha', 'beta-only');
    expect(same.status, same.body).toBe(201);
    expect(same.body).toContain('Key beta-only created');
    expect(same.body).not.toMatch(/exists|taken|beta\./);
    expect((await apiKeys()).filter((k) => k.spec.accountRef === 'beta')).toEqual(before);
    const again = await create(alice, 'alpha', 'beta-only');
    expect(again.status).toBe(422);
    expect(again.body).toContain('This account already has a key named beta-only.');
    // An ApiKey made with kubectl already holds the name the console would give: stepped around, and not said.
    const odd = { apiVersion: API, kind: 'ApiKey', metadata: { name: 'alpha.squat' }, spec: { accountRef: 'beta' } };
    await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], JSON.stringify(odd));
    const squat = await create(alice, 'alpha', 'squat');
    expect(squat.status, squat.body).toBe(201);
    expect(squat.body).not.toContain('alpha.squat');
    const made = (await apiKeys()).find((k) => k.spec.accountRef === 'alpha' && k.spec.displayName === 'squat');
    expect(made?.metadata.name).toMatch(/^alpha\.squat-[0-9a-f]{8}$/);
  });
});

describe('console key actions in a cluster: 4xx, never a 500, and nothing changed', () => {
  it('refuses a name that is no key name (400), a key of another account (404), a revoked key (409)', async () => {
    expect((await create(bob, 'beta', 'beta-private')).status).toBe(201);
    expect((await create(alice, 'alpha', 'done')).status).toBe(201);
    expect((await alice.post('/dashboard/keys/revoke', { account: 'alpha', name: 'done', confirm: 'done' })).status).toBe(200);
    const before = await apiKeysState();
    const cases: Array<[string, Promise<{ status: number; body: string }>, number]> = [
      ['revoke page, a sub-resource', alice.get('/dashboard/keys/revoke?account=alpha&name=beta-key%2Fstatus'), 400],
      ['rotate page, a sub-resource', alice.get('/dashboard/keys/rotate?account=alpha&name=beta-key%2Fstatus'), 400],
      ['revoke, a sub-resource', alice.post('/dashboard/keys/revoke', { account: 'alpha', name: 'beta-key/status', confirm: 'beta-key/status' }), 400],
      ['rotate, a sub-resource', alice.post('/dashboard/keys/rotate', { account: 'alpha', name: 'beta-key/status', grace: 'now' }), 400],
      ['revoke, a path', alice.post('/dashboard/keys/revoke', { account: 'alpha', name: '../beta-key', confirm: '../beta-key' }), 400],
      ["revoke page, another account's key", alice.get('/dashboard/keys/revoke?account=alpha&name=beta-private'), 404],
      ["rotate page, another account's key", alice.get('/dashboard/keys/rotate?account=alpha&name=beta-private'), 404],
      ['revoke page, no such key', alice.get('/dashboard/keys/revoke?account=alpha&name=nothing'), 404],
      ["revoke, another account's key", alice.post('/dashboard/keys/revoke', { account: 'alpha', name: 'beta-private', confirm: 'beta-private' }), 404],
      ["rotate, another account's key", alice.post('/dashboard/keys/rotate', { account: 'alpha', name: 'beta-private', grace: 'now' }), 404],
      [
        "revoke, another account's key by its object's name",
        alice.post('/dashboard/keys/revoke', { account: 'alpha', name: 'beta.beta-private', confirm: 'beta.beta-private' }),
        404,
      ],
      ['revoke, no such key', alice.post('/dashboard/keys/revoke', { account: 'alpha', name: 'nothing', confirm: 'nothing' }), 404],
      ['rotate, a revoked key', alice.post('/dashboard/keys/rotate', { account: 'alpha', name: 'done', grace: 'now' }), 409],
    ];
    for (const [what, answer, status] of cases) {
      const a = await answer;
      expect([what, a.status], a.body).toEqual([what, status]);
      expect(a.body).toContain('role="alert"');
    }
    expect(await apiKeysState()).toEqual(before);
  });

  it("answers 403 when the Kubernetes API refuses the console's write (RBAC)", async () => {
    expect((await create(alice, 'alpha', 'kept')).status).toBe(201);
    const as = `--as=system:serviceaccount:${ns}:${CONSOLE_SA}`;
    const rules = JSON.parse(await kubectlOk(cp, ['get', 'role', CONSOLE_SA, '-n', ns, '-o', 'json'])) as {
      rules: Array<{ resources: string[]; verbs: string[] }>;
    };
    const i = rules.rules.findIndex((r) => r.resources.includes('apikeys'));
    const patch = (verbs: string[]): string => JSON.stringify([{ op: 'replace', path: `/rules/${i}/verbs`, value: verbs }]);
    await kubectlOk(cp, ['patch', 'role', CONSOLE_SA, '-n', ns, '--type=json', '-p', patch(['get', 'list', 'create'])]);
    await waitFor(
      'RBAC refuses the console a patch',
      async () => (await kubectl(cp, ['auth', 'can-i', as, 'patch', 'apikeys.gateway.svc.dev', '-n', ns])).stdout.trim() === 'no',
      30_000,
      100,
    );
    const before = await apiKeysState();
    const revoke = await alice.post('/dashboard/keys/revoke', { account: 'alpha', name: 'kept', confirm: 'kept' });
    expect(revoke.status, revoke.body).toBe(403);
    expect(revoke.body).toContain('The Kubernetes API did not let the console change key kept');
    expect(await apiKeysState()).toEqual(before);
    await kubectlOk(cp, ['patch', 'role', CONSOLE_SA, '-n', ns, '--type=json', '-p', patch(['get', 'list', 'create', 'patch'])]);
  });
});

describe('console sessions in a cluster', () => {
  it('ends a session once its token is withdrawn (its bound Secret deleted), at the next review, and says why', async () => {
    await accountUser(cp, ns, 'carol', ['alpha'], MANAGE);
    await kubectlOk(cp, ['create', 'secret', 'generic', 'carol-anchor', '-n', ns]);
    const args = ['create', 'token', 'carol', '-n', ns, '--duration=1h', '--bound-object-kind=Secret', '--bound-object-name=carol-anchor'];
    const token = (await kubectlOk(cp, args)).trim();
    const carol = await signInHttp(app, token);
    // The session ends no later than the token (a bound token's exp: 1 hour).
    const maxAge = Number(/Max-Age=(\d+)/.exec(carol.setCookie)?.[1]);
    expect(maxAge).toBeGreaterThan(3000);
    expect(maxAge).toBeLessThanOrEqual(3600);
    // Redis holds the session as long as the token lives, and the token only sealed (nowhere in clear).
    const id = /svc_console=([^;]+)/.exec(carol.setCookie)?.[1] as string;
    const ttl = await redis.client.pttl(`${redis.prefix}:console:session:${createHash('sha256').update(id).digest('hex')}`);
    expect(ttl).toBeGreaterThan(3000_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);
    expect(await redisText(redis.client)).not.toContain(token.split('.')[2] as string);
    expect((await carol.get('/dashboard/keys')).status).toBe(200);
    expect((await create(carol, 'alpha', 'carols')).status).toBe(201);

    await kubectlOk(cp, ['delete', 'secret', 'carol-anchor', '-n', ns]);
    await waitFor('the API server refuses the token', async () => (await auth.authenticate(token)) === null, 30_000, 100);
    skew += auth.reviewEveryMs;
    const before = await apiKeysState();
    const page = await carol.get('/dashboard/keys');
    expect([page.status, page.location]).toEqual([303, '/dashboard/login?ended=token&next=%2Fdashboard%2Fkeys']);
    const revoke = await carol.post('/dashboard/keys/revoke', { account: 'alpha', name: 'carols', confirm: 'carols' });
    expect([revoke.status, revoke.location]).toEqual([303, '/dashboard/login']);
    expect(await apiKeysState()).toEqual(before);
    const login = await app.inject({ method: 'GET', url: page.location as string });
    expect(login.body).toContain('Your session ended: the token you signed in with is no longer valid. Sign in again.');
    // The others' sessions, whose tokens are valid, go on after their review.
    expect((await alice.get('/dashboard/keys')).status).toBe(200);
  });
});
