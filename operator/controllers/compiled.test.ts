// The ApiKey controller renders a compile of the key's own objects (its Account, Plan and Secret) and every other
// controller a compile without the ApiKeys: each must say exactly what the compile of the whole namespace says, the
// one the config controller publishes.
import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../gateway/contract/keys.ts';
import type { CrKind, CustomObject } from '../kube/clients.ts';
import { compiled, compiledKey, compiledObjects, forgetCompiled } from './compiled.ts';
import type { ControllerContext } from './context.ts';
import { cachesOf, cr } from './test-context.ts';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

let version = 0;
function secret(name: string, key: string): V1Secret {
  return { metadata: { name, resourceVersion: String(++version) }, data: { key: b64(key) } };
}

function contextOf(objects: Partial<Record<CrKind, CustomObject[]>>, secrets: V1Secret[]): ControllerContext {
  return { caches: cachesOf(objects, secrets), pepper: 'pepper', clients: { namespace: 'team-a' } } as unknown as ControllerContext;
}

describe("an ApiKey's compile of its own objects", () => {
  const ok = generateKey();
  const ctx = contextOf(
    {
      Plan: [cr('Plan', 'pro', { tier: 1, limits: { rpm: 60 } })],
      Account: [
        cr('Account', 'acme', { planRef: 'pro', credits: [{ id: 'c1', amountUsd: 10 }] }),
        cr('Account', 'strict', { planRef: 'pro', keyPolicy: { requireExpiry: true, maxKeyAgeDays: 30 } }),
        cr('Account', 'orphan', { planRef: 'gone' }),
      ],
      ApiKey: [
        cr('ApiKey', 'served', { accountRef: 'acme', limits: { rpm: 100 }, monthlyBudgetUsd: 5 }, { creationTimestamp: '2026-11-01T00:00:00Z' }),
        cr('ApiKey', 'named-secret', { accountRef: 'acme', secretName: 'mine' }),
        cr('ApiKey', 'no-secret', { accountRef: 'acme' }),
        cr('ApiKey', 'malformed', { accountRef: 'acme' }),
        cr('ApiKey', 'no-account', { accountRef: 'nobody' }),
        cr('ApiKey', 'no-plan', { accountRef: 'orphan' }),
        cr('ApiKey', 'policy', { accountRef: 'strict' }),
        cr('ApiKey', 'aged', { accountRef: 'strict', expiresAt: '2027-06-01T00:00:00Z' }, { creationTimestamp: '2026-11-01T00:00:00Z' }),
        cr('ApiKey', 'revoked', { accountRef: 'acme', revoked: true }),
        cr('ApiKey', 'console', { accountRef: 'acme', keyHash: 'a'.repeat(64), displayedKey: 'sk-svc-…abcd' }),
        cr('ApiKey', 'deleting', { accountRef: 'acme' }, { deletionTimestamp: '2026-11-27T00:00:00Z', finalizers: ['x'] }),
        cr('ApiKey', 'invalid', { accountRef: 7 }),
      ],
      ModelRoute: [cr('ModelRoute', 'chat', { targets: [{ name: 'm', provider: 'mock' }] })],
    },
    [
      secret('served-key', ok),
      secret('mine', generateKey()),
      secret('malformed-key', 'sk-svc-nope'),
      secret('no-account-key', generateKey()),
      secret('no-plan-key', generateKey()),
      secret('policy-key', generateKey()),
      secret('aged-key', generateKey()),
      secret('revoked-key', generateKey()),
      secret('deleting-key', generateKey()),
    ],
  );
  const whole = compiled(ctx);
  const names = ctx.caches.ApiKey.list().map((o) => o.metadata?.name ?? '');

  it('covers every way a key is judged', () => {
    const reasons = Object.fromEntries(names.map((n) => [n, whole.verdicts.apiKeys[n]?.reason]));
    expect(reasons).toMatchObject({
      served: 'Accepted',
      'named-secret': 'Accepted',
      'no-secret': 'MissingSecret',
      malformed: 'MalformedKey',
      'no-account': 'UnknownAccount',
      'no-plan': 'UnknownPlan',
      policy: 'KeyPolicy',
      revoked: 'Revoked',
      console: 'Accepted',
      deleting: 'Revoked',
      invalid: undefined,
    });
    expect(whole.keys.find((k) => k.name === 'aged')?.expiresAt).toBe(Date.parse('2026-12-01T00:00:00Z'));
  });

  it.each(names)('%s: the same verdict and key record as the whole namespace compiled', (name) => {
    const own = compiledKey(ctx, name, null);
    expect(own.verdicts.apiKeys[name]).toEqual(whole.verdicts.apiKeys[name]);
    expect(own.keys.find((k) => k.name === name)).toEqual(whole.keys.find((k) => k.name === name));
  });

  it('a key the Secret cache has not seen yet is the key compiled', () => {
    const key = generateKey();
    const own = compiledKey(ctx, 'no-secret', key);
    expect(own.verdicts.apiKeys['no-secret']?.ready).toBe(true);
    expect(own.keys.find((k) => k.name === 'no-secret')?.display).toBe(`sk-svc-…${key.slice(-4)}`);
    expect(compiledKey(ctx, 'no-secret', null).verdicts.apiKeys['no-secret']?.reason).toBe('MissingSecret');
  });

  it('every other kind: the same snapshot and verdicts without the ApiKeys, kept across key changes', () => {
    forgetCompiled(ctx.caches);
    const objects = compiledObjects(ctx);
    const all = compiled(ctx);
    expect(objects.snapshot).toEqual(all.snapshot);
    expect({ ...objects.verdicts, apiKeys: {} }).toEqual({ ...all.verdicts, apiKeys: {} });
    forgetCompiled(ctx.caches, true);
    expect(compiledObjects(ctx)).toBe(objects);
    expect(compiled(ctx)).not.toBe(all);
    forgetCompiled(ctx.caches);
    expect(compiledObjects(ctx)).not.toBe(objects);
  });
});
