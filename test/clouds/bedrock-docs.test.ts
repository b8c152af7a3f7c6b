// The AWS Bedrock section of docs/clouds.md: its IAM policy allows what the gateway calls for the models its examples
// route to, and its chart values put the IRSA role on the gateway's and the operator's service accounts. (Its
// ModelRoute, Secret and SDK call run in bedrock-credentials.test.ts, against the fakes.)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseDocs, find } from '../chart/chart.ts';
import { template } from '../chart/helm.ts';
import { docExample } from '../helpers/docs.ts';

interface Policy {
  Statement: Array<{ Effect: string; Action: string[]; Resource: string[] }>;
}

function allows(policy: Policy, action: string, arn: string): boolean {
  const glob = (p: string): RegExp =>
    new RegExp(
      `^${p
        .split('*')
        .map((x) => x.replace(/[.?+^$()[\]{}|\\/]/g, '\\$&'))
        .join('.*')}$`,
    );
  return policy.Statement.some((s) => s.Effect === 'Allow' && s.Action.includes(action) && s.Resource.some((r) => glob(r).test(arn)));
}

/** The ARNs Bedrock authorizes a call to a model id of the examples against (a profile: itself and its models). */
function arnsOf(modelId: string, region: string): string[] {
  const profile = /^(us|eu|apac|global)\.(.+)$/.exec(modelId);
  if (!profile) return [`arn:aws:bedrock:${region}::foundation-model/${modelId}`];
  return [`arn:aws:bedrock:${region}:123456789012:inference-profile/${modelId}`, `arn:aws:bedrock:us-west-2::foundation-model/${profile[2]}`];
}

describe('docs/clouds.md, AWS Bedrock', () => {
  it('the IAM policy allows invoking, streaming and counting tokens for every model the examples route to', () => {
    const policy = JSON.parse(docExample('docs/clouds.md', 'bedrock-iam-policy')) as Policy;
    const targets = ['bedrock-route', 'bedrock-secret'].flatMap((name) =>
      parseAllDocuments(docExample('docs/clouds.md', name))
        .map((d) => d.toJS() as { kind: string; spec?: { targets: Array<{ region: string; upstreamModel: string }> } })
        .filter((d) => d.kind === 'ModelRoute')
        .flatMap((d) => d.spec!.targets),
    );
    expect(targets.length).toBe(2);
    for (const t of targets) {
      for (const arn of arnsOf(t.upstreamModel, t.region)) {
        for (const action of ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'])
          expect(allows(policy, action, arn), `${action} on ${arn}`).toBe(true);
      }
    }
    expect(allows(policy, 'bedrock:CountTokens', arnsOf('anthropic.claude-haiku-4-5-20251001-v1:0', 'us-west-2')[0]!)).toBe(true);
    expect(
      allows(policy, 'bedrock:InvokeModel', 'arn:aws:bedrock:us-east-1::foundation-model/openai.gpt-oss-120b-1:0'),
      'nothing beyond the listed models',
    ).toBe(false);
  });

  it('the chart values annotate the gateway’s and the operator’s service accounts with the IRSA role', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bedrock-values-'));
    const file = join(dir, 'values.yaml');
    writeFileSync(file, docExample('docs/clouds.md', 'bedrock-chart-values'));
    const docs = parseDocs(await template('ns1', [file]));
    for (const sa of ['svc-svc-gateway-gateway', 'svc-svc-gateway-operator']) {
      const annotations = find(docs, 'ServiceAccount', sa).metadata.annotations;
      expect(annotations?.['eks.amazonaws.com/role-arn'], sa).toBe('arn:aws:iam::123456789012:role/svc-gateway-bedrock');
    }
  });
});
