// The ApiKey object behind a key made in the console. Key names are unique per account, ApiKey names in the whole
// namespace: were the object named as the key, a member of one account could take (and so block, or probe) the names
// of another's keys and their rotations. So the object is `<account>.<key name>` and the key name the user typed is
// spec.displayName: a key name has no dot, so distinct (account, name) pairs give distinct objects. An object of that
// name made some other way (kubectl) is stepped around with a random suffix, never reported.
import { randomBytes } from 'node:crypto';
import { isKeyName } from './key-name.ts';

const MAX = 253;

/** The object name for the `attempt`-th try (0: the plain one; then with a random suffix). */
export function apiKeyObjectName(account: string, name: string, attempt: number): string {
  const plain = `${account}.${name}`;
  const suffix = attempt === 0 ? '' : `-${randomBytes(4).toString('hex')}`;
  // Only an account name far past a label value's 63 characters gets here (the account label refuses it anyway).
  return `${plain.slice(0, MAX - suffix.length)}${suffix}`;
}

/** The key's name as the console shows and takes it: spec.displayName when it is one, else the object's name. */
export function keyNameOf(k: { metadata: { name: string }; spec: { displayName?: string } }): string {
  const d = k.spec.displayName;
  return d !== undefined && isKeyName(d) ? d : k.metadata.name;
}
