// The release workflow (.github/workflows/release.yml) runs on the hosting CI only; here it is linted with actionlint
// (expressions, permissions, action inputs, shell) and checked for what a release promises users: a tag builds the
// image for amd64 and arm64, pushes it to GHCR, signs it keyless, attaches an SBOM, and pushes the chart as an OCI
// artifact whose appVersion (the image tag it installs) is the release version; the chart's default image points there.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { isExecutable } from '../helpers/host.ts';
import { ROOT } from '../helpers/process.ts';
import { CHART, toolsBin } from './helm.ts';

const WORKFLOW = join(ROOT, '.github', 'workflows', 'release.yml');

function actionlint(): string {
  const bin = process.env.SVC_ACTIONLINT || join(toolsBin(), 'actionlint');
  if (!isExecutable(bin)) {
    throw new Error(
      `actionlint was not found at ${bin}. Install it once (go install from the Go module proxy, cached outside the repo; ` +
        '.ci/run does this): `bash test/chart/install-tools.sh`; or set SVC_ACTIONLINT to an actionlint binary.',
    );
  }
  return bin;
}

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  on: { push: { tags: string[] } };
  jobs: Record<string, { permissions?: Record<string, string>; steps: Step[]; needs?: string }>;
}

describe('the release workflow', () => {
  it('passes actionlint', async () => {
    const r = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(actionlint(), ['-no-color', WORKFLOW], { cwd: ROOT }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }),
      );
    });
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('on a tag: a multi-arch image to GHCR, signed keyless, with an SBOM; then the chart as an OCI artifact', () => {
    const wf = parse(readFileSync(WORKFLOW, 'utf8')) as Workflow;
    expect(wf.on.push.tags.length).toBeGreaterThan(0);
    const image = wf.jobs.image;
    const chart = wf.jobs.chart;
    expect(image?.permissions).toMatchObject({ packages: 'write', 'id-token': 'write' });
    const build = image?.steps.find((s) => s.uses?.startsWith('docker/build-push-action@'));
    expect(build?.with).toMatchObject({ platforms: 'linux/amd64,linux/arm64', push: true, sbom: true, file: 'Dockerfile' });
    const runs = (steps: Step[] | undefined): string => (steps ?? []).map((s) => s.run ?? '').join('\n');
    expect(runs(image?.steps)).toMatch(/cosign sign --yes "\$\{IMAGE\}@\$\{DIGEST\}"/);
    expect(runs(image?.steps)).toMatch(/cosign attest --yes --type spdxjson/);
    expect(image?.steps.some((s) => s.uses?.startsWith('docker/login-action@') && s.with?.registry === 'ghcr.io')).toBe(true);
    expect(chart?.needs).toBe('image');
    expect(runs(chart?.steps)).toMatch(/helm package charts\/svc-gateway --version "\$version" --app-version "\$version"/);
    expect(runs(chart?.steps)).toMatch(/helm push .* "oci:\/\/ghcr\.io\//);
  });

  it("the chart's default image is the one the workflow pushes (GHCR), its registry path a value", () => {
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as { image: { repository: string; tag: string } };
    expect(values.image.repository).toMatch(/^ghcr\.io\/[a-z0-9-]+\/svc-gateway$/);
    expect(values.image.tag).toBe('');
  });
});
