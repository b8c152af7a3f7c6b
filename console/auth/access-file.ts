// Standalone (no cluster, so no RBAC): who may do what in the console when people sign in with OpenID Connect, from a
// small YAML file (SVC_CONSOLE_ACCESS_FILE). Groups (and, for one-offs, users), named as the console names them (with
// the OIDC prefixes), get accounts and the same verbs a Role grants in a cluster:
//
//   groups:
//     team-a:
//       - accounts: [demo]
//         verbs: [get, manage-keys, view-usage]
//   users:
//     carol@example.com:
//       - accounts: ["*"]
//         verbs: [get, view-usage]
//
// Nothing named: no rights (the person signs in and sees no account). The admin token keeps every right.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from 'zod';
import type { Authorizer, Principal, Verb } from './principal.ts';

const VERBS = ['get', 'manage-keys', 'create-own-keys', 'view-usage', 'manage-billing', 'view-activity'] as const satisfies readonly Verb[];

const grant = z.object({ accounts: z.array(z.string().min(1)).min(1), verbs: z.array(z.enum(VERBS)).min(1) }).strict();
const grants = z.record(z.string().min(1), z.array(grant));
const schema = z.object({ groups: grants.default({}), users: grants.default({}) }).strict();

export type AccessMap = z.infer<typeof schema>;

export function parseAccess(text: string, where: string): AccessMap {
  let doc: unknown;
  try {
    doc = parse(text) ?? {};
  } catch (err) {
    throw new Error(`${where}: not YAML (${err instanceof Error ? err.message.split('\n')[0] : String(err)}).`, { cause: err });
  }
  const r = schema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${where}: ${i ? `${i.path.join('.') || '(top)'}: ${i.message}` : 'invalid'} (verbs are ${VERBS.join(', ')}).`);
  }
  return r.data;
}

export function accessFromEnv(env: Record<string, string | undefined>): AccessMap | null {
  const file = env.SVC_CONSOLE_ACCESS_FILE?.trim();
  if (!file) return null;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new Error(`SVC_CONSOLE_ACCESS_FILE: cannot read ${file}.`);
  }
  return parseAccess(text, `SVC_CONSOLE_ACCESS_FILE ${file}`);
}

/** The admin may do everything; a signed-in person what the file gives their user name or one of their groups. */
export class MappedAccess implements Authorizer {
  private readonly map: AccessMap;

  constructor(map: AccessMap) {
    this.map = map;
  }

  async allowed(p: Principal, verb: Verb, account: string): Promise<boolean> {
    if (p.kind === 'admin') return true;
    // Own properties only: a user or group named "constructor" finds nothing.
    const own = (r: Record<string, z.infer<typeof grant>[]>, k: string): z.infer<typeof grant>[] => (Object.hasOwn(r, k) ? (r[k] ?? []) : []);
    const lists = [own(this.map.users, p.username), ...p.groups.map((g) => own(this.map.groups, g))];
    return lists.some((list) => list.some((g) => g.verbs.includes(verb) && (g.accounts.includes(account) || g.accounts.includes('*'))));
  }
}
