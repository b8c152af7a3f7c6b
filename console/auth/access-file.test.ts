import { describe, expect, it } from 'vitest';
import { MappedAccess, parseAccess } from './access-file.ts';

const FILE = `
groups:
  team-a:
    - accounts: [demo]
      verbs: [get, manage-keys]
  everyone:
    - accounts: ["*"]
      verbs: [get]
users:
  carol@example.com:
    - accounts: [hobby]
      verbs: [view-usage]
`;

const user = (username: string, groups: string[]) => ({ kind: 'user' as const, username, uid: '', groups, extra: {} });

describe('the standalone access file', () => {
  const access = new MappedAccess(parseAccess(FILE, 'test'));

  it('gives a group its accounts and verbs, "*" every account, a user their own; nothing else', async () => {
    await expect(access.allowed(user('a', ['team-a']), 'manage-keys', 'demo')).resolves.toBe(true);
    await expect(access.allowed(user('a', ['team-a']), 'manage-keys', 'hobby')).resolves.toBe(false);
    await expect(access.allowed(user('a', ['team-a']), 'view-usage', 'demo')).resolves.toBe(false);
    await expect(access.allowed(user('b', ['everyone']), 'get', 'anything')).resolves.toBe(true);
    await expect(access.allowed(user('carol@example.com', []), 'view-usage', 'hobby')).resolves.toBe(true);
    await expect(access.allowed(user('dan', []), 'get', 'demo')).resolves.toBe(false);
    await expect(access.allowed(user('constructor', ['toString', '__proto__']), 'get', 'demo')).resolves.toBe(false);
    await expect(access.allowed({ kind: 'admin' }, 'manage-billing', 'demo')).resolves.toBe(true);
  });

  it('refuses a file with an unknown verb or key, naming where', () => {
    expect(() => parseAccess('groups: {a: [{accounts: [x], verbs: [delete]}]}', 'f.yaml')).toThrow(/f\.yaml: groups\.a\.0\.verbs\.0/);
    expect(() => parseAccess('roles: {}', 'f.yaml')).toThrow(/f\.yaml/);
    expect(() => parseAccess('groups: [', 'f.yaml')).toThrow(/not YAML/);
  });
});
