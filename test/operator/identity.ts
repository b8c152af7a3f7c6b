// The operator's identity in the test control plane: a ServiceAccount bound to exactly operator/rbac/role.yaml,
// and a kubeconfig holding a token for it (TokenRequest; the API server signs it, no controller-manager needed).
// Running every test's operator under it is what proves the Role is enough.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { readFileSync } from 'node:fs';
import type { ControlPlane } from '../k8s/control-plane.ts';
import { kubectlOk } from '../k8s/kubectl.ts';
import { ROOT } from '../helpers/process.ts';

export const RBAC_DIR = join(ROOT, 'operator', 'rbac');

interface Kubeconfig {
  clusters: Array<{ name: string; cluster: { server: string; 'certificate-authority-data': string } }>;
}

/** Creates ServiceAccount `sa` with a RoleBinding to the operator's Role in `ns`; returns a kubeconfig path. */
export async function operatorIdentity(cp: ControlPlane, ns: string, sa = 'svc-gateway-operator'): Promise<string> {
  await kubectlOk(cp, ['apply', '-n', ns, '-f', join(RBAC_DIR, 'role.yaml')]);
  await kubectlOk(cp, ['create', 'serviceaccount', '-n', ns, sa]);
  await kubectlOk(cp, ['create', 'rolebinding', '-n', ns, sa, '--role=svc-gateway-operator', `--serviceaccount=${ns}:${sa}`]);
  const token = (await kubectlOk(cp, ['create', 'token', '-n', ns, sa, '--duration=4h'])).trim();
  const admin = parse(readFileSync(cp.kubeconfig, 'utf8')) as Kubeconfig;
  const cluster = admin.clusters[0]?.cluster;
  if (!cluster) throw new Error('the admin kubeconfig has no cluster');
  const path = join(dirname(cp.kubeconfig), `${ns}-${sa}.kubeconfig`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster }],
      users: [{ name: sa, user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: sa, namespace: ns } }],
      'current-context': 'test',
    }),
    { mode: 0o600 },
  );
  return path;
}

/** The user name the API server gives the ServiceAccount (for kubectl auth can-i --as). */
export function serviceAccountUser(ns: string, sa = 'svc-gateway-operator'): string {
  return `system:serviceaccount:${ns}:${sa}`;
}
