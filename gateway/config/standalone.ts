// Standalone config: manifests from SVC_CONFIG (a multi-document YAML file or a folder), or the demo config.
import { fileURLToPath } from 'node:url';
import type { ApiKey, IncidentCr } from '../../crds/schema/index.ts';
import { compile, type CompileResult } from '../contract/compile.ts';
import type { Problem } from '../contract/problem.ts';
import { generateKey } from '../contract/keys.ts';
import { formatIssue, parseManifests, readManifestFiles, type ManifestIssue } from './manifests.ts';

export const DEMO_CONFIG = fileURLToPath(new URL('./demo.yaml', import.meta.url));

export class ConfigError extends Error {
  readonly issues: ManifestIssue[];
  constructor(issues: ManifestIssue[]) {
    super(`Invalid config:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
    this.issues = issues;
  }
}

export interface StandaloneConfig extends CompileResult {
  /** Keys generated for ApiKeys whose Secret holds none: shown once at start. */
  generated: Array<{ apiKey: string; account: string; key: string }>;
  warnings: ManifestIssue[];
  /** Incident documents among the manifests (declared incidents on /status). */
  incidents: IncidentCr[];
}

export function loadStandaloneConfig(path: string | undefined, pepper: string): StandaloneConfig {
  const file = path || DEMO_CONFIG;
  const read = readManifestFiles(file);
  const parsed = parseManifests(read.docs);
  const invalid = [...read.errors, ...parsed.errors];
  if (invalid.length > 0) throw new ConfigError(invalid);
  const generated: StandaloneConfig['generated'] = [];
  const keyFor = (k: ApiKey): string => {
    const key = generateKey();
    generated.push({ apiKey: k.metadata.name, account: k.spec.accountRef, key });
    return key;
  };
  const result = compile(parsed.set, { pepper, keyFor });
  // A target the compiler left out because its credentials Secret is missing is a warning, as in cluster mode where
  // the route's status says it: the route's other targets serve, and a route with none left answers 503
  // no_target_available. A target missing what its kind needs (region, project, baseUrl) is an error like any other.
  const issue = (p: Problem): ManifestIssue => ({ source: file, object: p.object, field: p.field, message: p.message });
  const errors = result.problems.filter((p) => p.leftOut !== 'target');
  if (errors.length > 0) throw new ConfigError(errors.map(issue));
  const leftOut = result.problems.filter((p) => p.leftOut === 'target').map((p) => issue({ ...p, message: `${p.message}; the target is not served` }));
  return { ...result, generated, warnings: [...parsed.warnings, ...leftOut], incidents: parsed.set.incidents ?? [] };
}
