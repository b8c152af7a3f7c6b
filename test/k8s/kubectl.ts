// kubectl against a test control plane: the tests check what users see, so they drive the same CLI users run.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { findBinaries } from './binaries.ts';
import type { ControlPlane } from './control-plane.ts';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function kubectl(cp: ControlPlane, args: string[], input?: string): Promise<KubectlResult> {
  const bin = findBinaries().kubectl;
  return new Promise((resolve) => {
    const child = execFile(bin, [`--kubeconfig=${cp.kubeconfig}`, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** Like kubectl(), but a non-zero exit throws with kubectl's output. */
export async function kubectlOk(cp: ControlPlane, args: string[], input?: string): Promise<string> {
  const r = await kubectl(cp, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** A fresh namespace for one test, so tests sharing a control plane never see each other's objects. */
export async function createNamespace(cp: ControlPlane, prefix = 'test'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await kubectlOk(cp, ['create', 'namespace', name]);
  return name;
}
