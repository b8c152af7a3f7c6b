// helm for the chart tests: SVC_HELM, else the pinned one install-tools.sh puts in the cache, else one on PATH.
// Missing helm is an error that says how to get it: these tests never skip.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/process.ts';
import { isExecutable } from '../helpers/host.ts';

export const CHART = join(ROOT, 'charts', 'svc-gateway');
export const FULL_VALUES = join(CHART, 'ci', 'full-values.yaml');

export const HOW_TO_GET_HELM =
  'Install it once (go install from the Go module proxy, cached outside the repo; .ci/run does this): ' +
  '`bash test/chart/install-tools.sh`; or set SVC_HELM to a helm v4 binary.';

export function toolsBin(env: NodeJS.ProcessEnv = process.env): string {
  return env.SVC_TOOLS_BIN || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'svc-gateway', 'bin');
}

export function helmVersion(): string {
  const m = /^HELM_VERSION=(\S+)$/m.exec(readFileSync(join(import.meta.dirname, 'versions.env'), 'utf8'));
  if (!m?.[1]) throw new Error('test/chart/versions.env has no HELM_VERSION');
  return m[1];
}

export function findHelm(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    env.SVC_HELM,
    join(toolsBin(env), 'helm'),
    ...(env.PATH ?? '')
      .split(':')
      .filter(Boolean)
      .map((d) => join(d, 'helm')),
  ];
  const found = candidates.find((c): c is string => !!c && isExecutable(c));
  if (!found) throw new Error(`helm was not found (SVC_HELM, ${join(toolsBin(env), 'helm')}, PATH). ${HOW_TO_GET_HELM}`);
  return found;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function helm(args: string[], opts: { kubeconfig?: string } = {}): Promise<HelmResult> {
  const bin = findHelm();
  // Helm's own state (repositories, cache) goes to a temp dir, not the user's home.
  const env = { ...process.env, HELM_CACHE_HOME: '/tmp/svc-helm/cache', HELM_CONFIG_HOME: '/tmp/svc-helm/config', HELM_DATA_HOME: '/tmp/svc-helm/data' };
  const withKube = opts.kubeconfig ? [`--kubeconfig=${opts.kubeconfig}`, ...args] : args;
  return new Promise((resolve) => {
    execFile(bin, withKube, { env, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

export async function helmOk(args: string[], opts: { kubeconfig?: string } = {}): Promise<string> {
  const r = await helm(args, opts);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** `helm template` of the chart into namespace `ns` with the given values files and --set flags. */
export function template(ns: string, valuesFiles: string[] = [], set: string[] = []): Promise<string> {
  return helmOk(['template', 'svc', CHART, '--namespace', ns, ...valuesFiles.flatMap((f) => ['-f', f]), ...set.flatMap((s) => ['--set', s])]);
}
