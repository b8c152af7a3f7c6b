// Standalone config: manifests from SVC_CONFIG (a multi-document YAML file or a folder), or the demo config.
import { fileURLToPath } from 'node:url';
import type { ApiKey } from '../../crds/schema/index.ts';
import { compile, type CompileResult } from '../contract/compile.ts';
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
}

export function loadStandaloneConfig(path: string | undefined, pepper: string): StandaloneConfig {
  const file = path || DEMO_CONFIG;
  const read = readManifestFiles(file);
  const parsed = parseManifests(read.docs);
  const errors = [...read.errors, ...parsed.errors];
  if (errors.length > 0) throw new ConfigError(errors);
  const generated: StandaloneConfig['generated'] = [];
  const keyFor = (k: ApiKey): string => {
    const key = generateKey();
    generated.push({ apiKey: k.metadata.name, account: k.spec.accountRef, key });
    return key;
  };
  const result = compile(parsed.set, { pepper, keyFor });
  if (result.problems.length > 0) {
    throw new ConfigError(result.problems.map((p) => ({ source: file, ...p })));
  }
  return { ...result, generated, warnings: parsed.warnings };
}
