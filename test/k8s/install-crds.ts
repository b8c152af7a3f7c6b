// Installs the generated CRDs (crds/*.yaml) into a test control plane and waits until they are served.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlPlane } from './control-plane.ts';
import { until } from '../helpers/until.ts';
import { kubectl, kubectlOk } from './kubectl.ts';

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
  // Established is not yet listable: the API server answers 429 "storage is (re)initializing" for a moment after.
  const kinds = (await kubectlOk(cp, ['get', ...files.flatMap((f) => ['-f', f]), '-o', 'jsonpath={.items[*].spec.names.plural}'])).split(' ').filter(Boolean);
  const listable = async (): Promise<boolean> => (await kubectl(cp, ['get', '-A', kinds.join(',')])).code === 0;
  await until(listable, 60_000, 'every custom resource listable', 250);
}
