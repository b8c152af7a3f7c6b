// The clouds' workload identity with the chart (docs/clouds.md): the values of the docs' example land on the
// gateway's and the operator's ServiceAccounts and pods, and nothing lands anywhere without them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { find, parseDocs, type K8sObject } from './chart.ts';
import { template } from './helm.ts';

const podLabels = (d: K8sObject): Record<string, string> =>
  (d as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }).spec.template.metadata.labels ?? {};

describe('workload identity values', () => {
  it("puts the docs' annotations on both ServiceAccounts and the pod labels on the gateway's pods", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-identity-')), 'values.yaml');
    const values = docExample('docs/clouds.md', 'chart-identity').replace('podLabels: {}', 'podLabels: {azure.workload.identity/use: "true"}');
    writeFileSync(file, values);
    const docs = parseDocs(await template('ns1', [file]));
    const role = 'arn:aws:iam::123456789012:role/svc-gateway-bedrock';
    expect(find(docs, 'ServiceAccount', '-gateway').metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': role });
    expect(find(docs, 'ServiceAccount', '-operator').metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': role });
    expect(podLabels(find(docs, 'Deployment', '-gateway'))).toMatchObject({ 'azure.workload.identity/use': 'true', 'app.kubernetes.io/component': 'gateway' });
    expect(podLabels(find(docs, 'Deployment', '-operator'))).not.toHaveProperty('azure.workload.identity/use');
  });

  it('adds no annotation and no label by default', async () => {
    const docs = parseDocs(await template('ns1'));
    // helm's own annotations of a hook (the uninstall Job's ServiceAccount) aside.
    const ours = (a: Record<string, string> = {}): Record<string, string> =>
      Object.fromEntries(Object.entries(a).filter(([k]) => !k.startsWith('helm.sh/hook')));
    for (const sa of docs.filter((d) => d.kind === 'ServiceAccount')) expect(ours(sa.metadata.annotations), sa.metadata.name).toEqual({});
    expect(Object.keys(podLabels(find(docs, 'Deployment', '-gateway'))).filter((k) => k.includes('azure'))).toEqual([]);
  });
});
