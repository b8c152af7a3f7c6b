// Identities in the test control plane: the console's ServiceAccount bound to exactly console/rbac/role.yaml (a
// kubeconfig holding its token), and users (ServiceAccounts with Roles on accounts.gateway.svc.dev/<name>) who
// sign in with a token as a person would paste one.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { ControlPlane } from '../k8s/control-plane.ts';
import { kubectlOk } from '../k8s/kubectl.ts';
import { ROOT } from '../helpers/process.ts';

export const CONSOLE_SA = 'svc-gateway-console';

/** Applies console/rbac/role.yaml for namespace `ns` (its ClusterRoleBinding's subject and name adjusted). */
export async function consoleIdentity(cp: ControlPlane, ns: string): Promise<string> {
  const docs = parseAllDocuments(readFileSync(join(ROOT, 'console', 'rbac', 'role.yaml'), 'utf8')).map((d) => d.toJS() as Record<string, unknown>);
  for (const d of docs) {
    if (d.kind !== 'ClusterRoleBinding') continue;
    (d.metadata as { name: string }).name = `${ns}-${CONSOLE_SA}`;
    for (const s of d.subjects as Array<{ namespace: string }>) s.namespace = ns;
  }
  await kubectlOk(cp, ['create', 'serviceaccount', '-n', ns, CONSOLE_SA]);
  await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], docs.map((d) => stringify(d)).join('---\n'));
  await kubectlOk(cp, ['create', 'rolebinding', '-n', ns, CONSOLE_SA, `--role=${CONSOLE_SA}`, `--serviceaccount=${ns}:${CONSOLE_SA}`]);
  const token = await tokenFor(cp, ns, CONSOLE_SA);
  const admin = parseAllDocuments(readFileSync(cp.kubeconfig, 'utf8'))[0]?.toJS() as { clusters: Array<{ cluster: unknown }> };
  const path = join(dirname(cp.kubeconfig), `${ns}-${CONSOLE_SA}.kubeconfig`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: CONSOLE_SA, user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: CONSOLE_SA, namespace: ns } }],
      'current-context': 'test',
    }),
    { mode: 0o600 },
  );
  return path;
}

export async function tokenFor(cp: ControlPlane, ns: string, sa: string): Promise<string> {
  return (await kubectlOk(cp, ['create', 'token', '-n', ns, sa, '--duration=2h'])).trim();
}

/** A user (ServiceAccount `name`) with a Role granting `verbs` on the named accounts; returns its token. */
export async function accountUser(cp: ControlPlane, ns: string, name: string, accounts: string[], verbs: string[]): Promise<string> {
  await kubectlOk(cp, ['create', 'serviceaccount', '-n', ns, name]);
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: `${name}-keys` },
    rules: [{ apiGroups: ['gateway.svc.dev'], resources: ['accounts'], resourceNames: accounts, verbs }],
  };
  await kubectlOk(cp, ['apply', '-n', ns, '-f', '-'], stringify(role));
  await kubectlOk(cp, ['create', 'rolebinding', '-n', ns, `${name}-keys`, `--role=${name}-keys`, `--serviceaccount=${ns}:${name}`]);
  return tokenFor(cp, ns, name);
}
