// The chart's PrometheusRule as Prometheus reads it: `helm template` with metrics.prometheusRule.enabled (and any
// --set), its spec written as a rules file (promtool and prometheus take `groups:` as the operator's CRD does).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { find, parseDocs } from './chart.ts';
import { template } from './helm.ts';

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroups {
  groups: Array<{ name: string; rules: AlertRule[] }>;
}

/** `values`: metrics.prometheusRule values beside enabled (a values file: --set would pass 0.25 as a string). */
export async function renderedRules(values: Record<string, unknown> = {}): Promise<RuleGroups> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rule-values-'));
  try {
    const file = join(dir, 'values.yaml');
    writeFileSync(file, stringify({ metrics: { prometheusRule: { enabled: true, ...values } } }));
    return find(parseDocs(await template('alerts', [file])), 'PrometheusRule', 'svc-gateway').spec as RuleGroups;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const alertsOf = (r: RuleGroups): AlertRule[] => r.groups.flatMap((g) => g.rules);

/** The rules as a file in a fresh temp dir (promtool resolves a test file's rule_files from its own dir). */
export function writeRules(r: RuleGroups): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rules-'));
  const file = join(dir, 'rules.yaml');
  writeFileSync(file, stringify(r));
  return { dir, file };
}
