// The AWS credential chains as a pod runs them, unmodified, in a real gateway process (so their environment variables
// stay in that process): EKS IRSA (AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE → STS AssumeRoleWithWebIdentity), EKS Pod
// Identity (AWS_CONTAINER_CREDENTIALS_FULL_URI + AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE), and a Secret's key pair
// assuming a role with an external id (AssumeRole). Only their endpoints point at fakes on 127.0.0.1
// (AWS_ENDPOINT_URL_STS, the full URI); the fake Bedrock runtime verifies every signature with the credentials the
// fakes issued. Credentials are fetched once and reused, refreshed before they expire (a call after the refresh point
// is signed with new ones, and the old ones, expired at the runtime, are never used again), never per call. A chain
// that finds nothing makes the target fail over with credential_error, and no credential reaches the answer or the log.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import type { FakeAwsKey } from '../fakes/bedrock/sigv4-check.ts';
import { startFakeAwsIdentity, type FakeAwsIdentity } from '../fakes/bedrock/sts.ts';
import { parseAllDocuments } from 'yaml';
import { basics, route, secret, toYaml } from '../helpers/manifests.ts';
import { docExample } from '../helpers/docs.ts';
import { ROOT, startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';

const run = promisify(execFile);
const CLAUDE = 'anthropic.claude-haiku-4-5-20251001-v1:0';
const SA_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.fake-service-account-token.sig';
const POD_TOKEN = 'fake-pod-identity-authorization-token';
const MASTER = { accessKeyId: 'AKIAFAKEMASTER000001', secretAccessKey: 'fake-master-secret-0123456789abcdef' };
/** The SDK refreshes 5 minutes before expiry: these credentials are due for a refresh 4 s after they are issued. */
const TTL_MS = 5 * 60_000 + 4000;

const dir = mkdtempSync(join(tmpdir(), 'bedrock-creds-'));
const b = basics();
let runtime: FakeBedrock;
let identity: FakeAwsIdentity;
const gateways: GatewayProcess[] = [];

/** No credential source of this machine may leak in: no keys, no profile files, no instance metadata. */
const ISOLATED: Record<string, string | undefined> = {
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_PROFILE: undefined,
  AWS_ROLE_ARN: undefined,
  AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
  AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined,
  AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: undefined,
  AWS_CONFIG_FILE: join(dir, 'no-config'),
  AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_REGION: 'us-east-1',
};

function config(name: string, docs: object[]): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, toYaml([...b.docs, ...docs]));
  return file;
}

const target = (name: string, credentials: object): never =>
  ({ name, provider: 'bedrock', region: 'us-east-1', baseUrl: runtime.url, upstreamModel: CLAUDE, credentials }) as never;

/** A docs example's manifests, pointed at the fakes: baseUrl set, the Secret's placeholder key pair replaced. */
function fromDocs(yaml: string): object[] {
  return parseAllDocuments(yaml).map((d) => {
    const o = d.toJS() as { kind: string; stringData?: Record<string, string>; spec?: { targets: Array<Record<string, unknown>> } };
    if (o.kind === 'Secret' && o.stringData)
      o.stringData = { ...o.stringData, AWS_ACCESS_KEY_ID: MASTER.accessKeyId, AWS_SECRET_ACCESS_KEY: MASTER.secretAccessKey };
    for (const t of o.spec?.targets ?? []) t.baseUrl = runtime.url;
    return o;
  });
}

async function gateway(name: string, docs: object[], env: Record<string, string | undefined>): Promise<GatewayProcess> {
  const gw = await startGatewayProcess({ ...ISOLATED, ...env, SVC_CONFIG: config(name, docs) });
  gateways.push(gw);
  return gw;
}

async function ask(gw: GatewayProcess, model: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': b.keys.builder, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Every secret the fakes issued or hold, which must appear in no answer and no log line. */
function secrets(): string[] {
  return [SA_TOKEN, POD_TOKEN, MASTER.secretAccessKey, ...identity.issued.flatMap((k) => [k.secretAccessKey, k.sessionToken ?? ''])].filter((s) => s !== '');
}

beforeAll(async () => {
  runtime = await startFakeBedrock();
  identity = await startFakeAwsIdentity({
    runtime,
    webIdentityToken: SA_TOKEN,
    podIdentityToken: POD_TOKEN,
    masterKeys: [MASTER],
    ttlMs: TTL_MS,
    externalId: 'svc-gateway',
    ttlMsFor: { AssumeRole: 3_600_000, PodIdentity: 3_600_000 },
  });
  writeFileSync(join(dir, 'sa-token'), SA_TOKEN);
  writeFileSync(join(dir, 'pod-token'), POD_TOKEN);
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await Promise.all([runtime?.close(), identity?.close()]);
});

describe('EKS IRSA (web identity) and a Secret that assumes a role', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await gateway(
      'irsa',
      [
        secret('aws-assume', {
          AWS_ACCESS_KEY_ID: MASTER.accessKeyId,
          AWS_SECRET_ACCESS_KEY: MASTER.secretAccessKey,
          AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/bedrock',
          AWS_ROLE_EXTERNAL_ID: 'svc-gateway',
        }),
        secret('aws-assume-wrong', {
          AWS_ACCESS_KEY_ID: MASTER.accessKeyId,
          AWS_SECRET_ACCESS_KEY: MASTER.secretAccessKey,
          AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/bedrock',
          AWS_ROLE_EXTERNAL_ID: 'guess',
        }),
        route('claude-irsa', [target('bedrock-irsa', { ambient: {} })]),
        ...fromDocs(docExample('docs/clouds.md', 'bedrock-route')),
        ...fromDocs(docExample('docs/clouds.md', 'bedrock-secret')),
        route('claude-assume', [target('bedrock-assume', { secretKeyRef: { name: 'aws-assume' } })]),
        route('claude-assume-wrong', [
          target('bedrock-assume-wrong', { secretKeyRef: { name: 'aws-assume-wrong' } }),
          { name: 'spare', provider: 'mock', weight: 0 },
        ]),
      ],
      {
        AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/svc-gateway-bedrock',
        AWS_WEB_IDENTITY_TOKEN_FILE: join(dir, 'sa-token'),
        AWS_ENDPOINT_URL_STS: identity.url,
      },
    );
  });

  it('signs with the web identity credentials, fetched once for many calls, and refreshed before they expire', async () => {
    // Counted since the gateway started (its availability probe may be the first to fetch them).
    const sts = (): number => identity.counts.AssumeRoleWithWebIdentity ?? 0;
    const newest = (): FakeAwsKey => identity.issuedBy.AssumeRoleWithWebIdentity!.at(-1)!;
    const before = 0;
    for (let i = 0; i < 3; i++) expect((await ask(gw, 'claude-irsa')).status).toBe(200);
    expect(sts() - before, 'one STS call for three Bedrock calls (and the probe)').toBe(1);
    const first = newest();
    expect(runtime.calls.at(-1)?.auth).toBe(first.accessKeyId);
    await new Promise((r) => setTimeout(r, 4500)); // past the refresh point of the first credentials
    // The chain refreshes in the background while the old credentials, still valid for 5 minutes, sign this call.
    expect((await ask(gw, 'claude-irsa')).status).toBe(200);
    await until(() => sts() === 2, 5000, 'the second STS call');
    first.expired = true; // from now on the runtime refuses them: a gateway still using them would fail
    expect((await ask(gw, 'claude-irsa')).status).toBe(200);
    expect(sts() - before, 'a second STS call once the first credentials were due').toBe(2);
    expect(runtime.calls.at(-1)?.auth).toBe(newest().accessKeyId);
    expect(runtime.calls.at(-1)?.headers['x-amz-security-token']).toBe(newest().sessionToken);
    expect((await ask(gw, 'claude-irsa')).status).toBe(200);
    expect(sts() - before).toBe(2);
  });

  it('assumes the Secret’s role with its external id, signed with its key pair', async () => {
    expect((await ask(gw, 'claude-assume')).status).toBe(200);
    const first = runtime.calls.at(-1)?.auth;
    const issued = identity.issuedBy.AssumeRole?.length;
    expect(
      identity.issuedBy.AssumeRole?.map((k) => k.accessKeyId),
      'signed with credentials AssumeRole issued',
    ).toContain(first);
    expect((await ask(gw, 'claude-assume')).status).toBe(200);
    expect((await ask(gw, 'claude-assume')).status).toBe(200);
    expect(runtime.calls.at(-1)?.auth, 'the same credentials for the next calls').toBe(first);
    expect(identity.issuedBy.AssumeRole?.length, 'no AssumeRole per call').toBe(issued);
  });

  it('a role that refuses the external id is a credential_error: the target fails over, nothing secret is said', async () => {
    const r = await ask(gw, 'claude-assume-wrong');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    expect(r.headers.get('x-svc-upstream')).toBe('spare');
    for (const s of secrets()) {
      expect(r.text).not.toContain(s);
      expect(gw.output()).not.toContain(s);
    }
  });

  it('serves the documented ModelRoute of docs/clouds.md (ambient) to the documented SDK call', async () => {
    const code = docExample('docs/clouds.md', 'bedrock-sdk-call').replaceAll('http://127.0.0.1:8080', gw.url);
    // Asynchronously: the fakes answer from this process.
    const { stdout: out } = await run(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, SVC_KEY: b.keys.builder },
      encoding: 'utf8',
    });
    expect(out).toContain('Hello from the fake Bedrock runtime.');
    expect(out).toMatch(/input tokens: 21 output tokens: 9/);
    expect(runtime.calls.at(-1)?.rawPath).toBe(`/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-5-20250929-v1:0')}/invoke-with-response-stream`);
    expect(identity.issuedBy.AssumeRoleWithWebIdentity?.map((k) => k.accessKeyId)).toContain(runtime.calls.at(-1)?.auth);
  });

  it('serves the documented Secret of docs/clouds.md (a key pair assuming a role with an external id)', async () => {
    expect((await ask(gw, 'claude-haiku')).status).toBe(200);
    expect(identity.issuedBy.AssumeRole?.map((k) => k.accessKeyId)).toContain(runtime.calls.at(-1)?.auth);
    expect(runtime.calls.at(-1)?.headers.authorization).toContain('/us-west-2/bedrock/aws4_request');
  });
});

describe('EKS Pod Identity (container credentials)', () => {
  it('signs with the credentials of the Pod Identity agent, fetched once', async () => {
    const gw = await gateway('pod-identity', [route('claude-pod', [target('bedrock-pod', { ambient: {} })])], {
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `${identity.url}/v1/credentials`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: join(dir, 'pod-token'),
    });
    const before = 0; // since the gateway started (its availability probe may be the first to fetch them)
    expect((await ask(gw, 'claude-pod')).status).toBe(200);
    expect((await ask(gw, 'claude-pod')).status).toBe(200);
    expect((identity.counts.PodIdentity ?? 0) - before).toBe(1);
    expect(runtime.calls.at(-1)?.auth).toBe(identity.issuedBy.PodIdentity!.at(-1)!.accessKeyId);
    for (const s of secrets()) expect(gw.output()).not.toContain(s);
  });
});

describe('no credentials at all', () => {
  it('fails over with credential_error and a reason naming no secret', async () => {
    const gw = await gateway('none', [route('claude-none', [target('bedrock-none', { ambient: {} }), { name: 'spare', provider: 'mock', weight: 0 }])], {});
    const r = await ask(gw, 'claude-none');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    const alone = await gateway('none-alone', [route('claude-none', [target('bedrock-none', { ambient: {} })])], {});
    const failed = await ask(alone, 'claude-none');
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('cannot be obtained');
    for (const s of secrets()) expect(failed.text + alone.output()).not.toContain(s);
  });
});
