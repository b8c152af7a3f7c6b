// Finds the control-plane binaries: KUBEBUILDER_ASSETS (the envtest convention) first, then the cache that
// build-binaries.sh fills. Missing binaries are an error that says how to get them: these tests never skip.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isExecutable } from '../helpers/host.ts';

export interface Binaries {
  kubeApiserver: string;
  etcd: string;
  kubectl: string;
}

/** K8S_VERSION and ETCD_VERSION from versions.env, the file build-binaries.sh sources. */
export function versions(): { k8s: string; etcd: string } {
  const text = readFileSync(join(import.meta.dirname, 'versions.env'), 'utf8');
  const get = (name: string): string => {
    const m = new RegExp(`^${name}=(\\S+)$`, 'm').exec(text);
    if (!m?.[1]) throw new Error(`versions.env has no ${name}`);
    return m[1];
  };
  return { k8s: get('K8S_VERSION'), etcd: get('ETCD_VERSION') };
}

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['SVC_K8S_CACHE'] || join(env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'svc-gateway', 'k8s');
  return join(base, versions().k8s);
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(':')) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

export const HOW_TO_GET =
  'Build them once (about 10 minutes cold, cached outside the repo): `bash test/k8s/build-binaries.sh`; ' +
  'or set KUBEBUILDER_ASSETS to a directory holding kube-apiserver, etcd and kubectl (e.g. from setup-envtest).';

export function findBinaries(env: NodeJS.ProcessEnv = process.env): Binaries {
  const assets = env['KUBEBUILDER_ASSETS'];
  const dirs = assets && isExecutable(join(assets, 'kube-apiserver')) && isExecutable(join(assets, 'etcd')) ? [assets, cacheDir(env)] : [cacheDir(env)];
  const pick = (name: string): string | undefined => dirs.map((d) => join(d, name)).find(isExecutable);
  const kubeApiserver = pick('kube-apiserver');
  const etcd = pick('etcd');
  // kubectl: the version-matched one we build, else one on PATH (any recent kubectl talks to 1.34).
  const kubectl = pick('kubectl') ?? onPath('kubectl');
  const missing = [!kubeApiserver && 'kube-apiserver', !etcd && 'etcd', !kubectl && 'kubectl'].filter(Boolean);
  if (!kubeApiserver || !etcd || !kubectl) {
    const where = assets ? `KUBEBUILDER_ASSETS=${assets} or ${cacheDir(env)}` : cacheDir(env);
    throw new Error(`The test control plane needs ${missing.join(', ')}, not found in ${where}. ${HOW_TO_GET}`);
  }
  return { kubeApiserver, etcd, kubectl };
}
