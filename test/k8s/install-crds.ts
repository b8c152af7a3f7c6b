// Installs the generated CRDs (crds/*.yaml) into a test control plane and waits until they are served.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlane } from './control-plane.ts';
import { kubectlOk } from './kubectl.ts';

export const CRD_DIR = join(import.meta.dirname, '..', '..', 'crds');

export function crdFiles(): string[] {
  return readdirSync(CRD_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(CRD_DIR, f));
}

export async function installCrds(cp: ControlPlane): Promise<void> {
  const files = crdFiles();
  await kubectlOk(cp, ['apply', '--server-side', ...files.flatMap((f) => ['-f', f])]);
  await kubectlOk(cp, ['wait', '--for=condition=Established', '--timeout=60s', ...files.flatMap((f) => ['-f', f])]);
}
