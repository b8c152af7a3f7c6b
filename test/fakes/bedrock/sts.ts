// The AWS token endpoints a cluster's pods use, faked on 127.0.0.1 and reached by the SDK's unmodified credential
// chains through their documented endpoint overrides:
// - STS (AWS_ENDPOINT_URL_STS): AssumeRoleWithWebIdentity (EKS IRSA: the projected service-account token from
//   AWS_WEB_IDENTITY_TOKEN_FILE), and AssumeRole signed with a key pair (verified like the runtime fake does, service
//   sts), checking the role's external id;
// - the EKS Pod Identity agent (AWS_CONTAINER_CREDENTIALS_FULL_URI, path /v1/credentials), checking the
//   Authorization token from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE.
// Each issues short-lived credentials (ttlMs) and registers them with the fake Bedrock runtime, which then accepts
// their signatures.
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { FakeBedrock } from './runtime.ts';
import { checkAuth, type FakeAwsKey } from './sigv4-check.ts';

export interface FakeAwsIdentity {
  url: string;
  /** Calls per action: AssumeRoleWithWebIdentity, AssumeRole, PodIdentity. */
  counts: Record<string, number>;
  /** The credentials issued so far, newest last; and by action. */
  issued: FakeAwsKey[];
  issuedBy: Record<string, FakeAwsKey[]>;
  close(): Promise<void>;
}

export interface IdentityOptions {
  runtime: FakeBedrock;
  /** The service-account token IRSA must present. */
  webIdentityToken?: string;
  /** The Pod Identity agent's authorization token. */
  podIdentityToken?: string;
  /** Key pairs allowed to call AssumeRole, and the external id the role requires. */
  masterKeys?: FakeAwsKey[];
  externalId?: string;
  /** How long issued credentials live (the SDK refreshes 5 minutes before expiry: keep it above 5 min). */
  ttlMs: number;
  /** Another lifetime for the credentials of one action (AssumeRoleWithWebIdentity, AssumeRole, PodIdentity). */
  ttlMsFor?: Record<string, number>;
}

function xmlError(res: ServerResponse, status: number, code: string, message: string): void {
  res
    .writeHead(status, { 'content-type': 'text/xml' })
    .end(
      `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>fake</RequestId></ErrorResponse>`,
    );
}

export async function startFakeAwsIdentity(o: IdentityOptions): Promise<FakeAwsIdentity> {
  const sockets = new Set<Socket>();
  const counts: Record<string, number> = {};
  const issued: FakeAwsKey[] = [];
  const issuedBy: Record<string, FakeAwsKey[]> = {};

  const issue = (action: string): { key: FakeAwsKey; expiration: string } => {
    const key: FakeAwsKey = {
      accessKeyId: `ASIAFAKE${randomBytes(6).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(20).toString('base64'),
      sessionToken: randomBytes(32).toString('base64'),
    };
    o.runtime.keys.set(key.accessKeyId, key);
    issued.push(key);
    (issuedBy[action] ??= []).push(key);
    return { key, expiration: new Date(Date.now() + (o.ttlMsFor?.[action] ?? o.ttlMs)).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  };

  const stsAnswer = (action: string, c: { key: FakeAwsKey; expiration: string }, roleArn: string): string =>
    `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><${action}Result>` +
    `<AssumedRoleUser><Arn>${roleArn.replace(':role/', ':assumed-role/')}/svc-gateway</Arn><AssumedRoleId>AROAFAKE:svc-gateway</AssumedRoleId></AssumedRoleUser>` +
    `<Credentials><AccessKeyId>${c.key.accessKeyId}</AccessKeyId><SecretAccessKey>${c.key.secretAccessKey}</SecretAccessKey>` +
    `<SessionToken>${c.key.sessionToken}</SessionToken><Expiration>${c.expiration}</Expiration></Credentials>` +
    `</${action}Result><ResponseMetadata><RequestId>fake-sts</RequestId></ResponseMetadata></${action}Response>`;

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(parts);
        if (req.method === 'GET' && req.url === '/v1/credentials') {
          counts.PodIdentity = (counts.PodIdentity ?? 0) + 1;
          if (!o.podIdentityToken || req.headers.authorization !== o.podIdentityToken) {
            return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"invalid token"}');
          }
          const c = issue('PodIdentity');
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              AccessKeyId: c.key.accessKeyId,
              SecretAccessKey: c.key.secretAccessKey,
              Token: c.key.sessionToken,
              AccountId: '123456789012',
              Expiration: c.expiration,
            }),
          );
        }
        const form = new URLSearchParams(raw.toString('utf8'));
        const action = form.get('Action') ?? '';
        counts[action] = (counts[action] ?? 0) + 1;
        const roleArn = form.get('RoleArn') ?? '';
        if (action === 'AssumeRoleWithWebIdentity') {
          if (!o.webIdentityToken || form.get('WebIdentityToken') !== o.webIdentityToken) {
            return xmlError(res, 400, 'InvalidIdentityToken', "Couldn't retrieve verification key from your identity provider");
          }
          return void res.writeHead(200, { 'content-type': 'text/xml' }).end(stsAnswer(action, issue(action), roleArn));
        }
        if (action === 'AssumeRole') {
          const keys = new Map((o.masterKeys ?? []).map((k) => [k.accessKeyId, k]));
          const v = await checkAuth({
            method: req.method ?? 'POST',
            rawPath: req.url ?? '/',
            headers: req.headers,
            body: raw,
            keys,
            apiKeys: new Set(),
            service: 'sts',
          });
          if (!v.ok) return xmlError(res, v.status, v.type.replace(/Exception$/, ''), v.message);
          if (o.externalId !== undefined && form.get('ExternalId') !== o.externalId)
            return xmlError(res, 403, 'AccessDenied', 'not authorized to perform sts:AssumeRole');
          return void res.writeHead(200, { 'content-type': 'text/xml' }).end(stsAnswer(action, issue(action), roleArn));
        }
        xmlError(res, 400, 'InvalidAction', `unknown action ${action}`);
      })();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    issued,
    issuedBy,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
