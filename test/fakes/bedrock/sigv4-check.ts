// How the fake Bedrock checks a request's authentication, as AWS does: SigV4 recomputed with @smithy/signature-v4 from
// the fake's own copy of the credentials over the request as received (method, raw path, the signed headers, the body
// bytes), or a Bedrock API key it issued (Bearer).
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import { NodeSha256 } from '../../../gateway/providers/bedrock/sign.ts';

export interface FakeAwsKey {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** The session token has expired (ExpiredTokenException). */
  expired?: boolean;
}

export type AuthVerdict = { ok: true; who: string } | { ok: false; status: number; type: string; message: string };

const MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

function one(v: string | string[] | undefined): string {
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
}

function amzDate(s: string): Date {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return new Date(NaN);
  return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
}

export async function checkAuth(opts: {
  method: string;
  rawPath: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  keys: ReadonlyMap<string, FakeAwsKey>;
  apiKeys: ReadonlySet<string>;
  service?: string;
}): Promise<AuthVerdict> {
  const authz = one(opts.headers.authorization);
  if (authz.startsWith('Bearer ')) {
    return opts.apiKeys.has(authz.slice(7))
      ? { ok: true, who: 'api-key' }
      : { ok: false, status: 403, type: 'AccessDeniedException', message: 'Authentication failed: Invalid API Key format: Must start with pre-defined prefix' };
  }
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(authz);
  if (!m) return { ok: false, status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, akid, , region, service, signedList, signature] = m as unknown as string[];
  const key = opts.keys.get(akid!);
  if (!key) return { ok: false, status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (service !== (opts.service ?? 'bedrock'))
    return {
      ok: false,
      status: 403,
      type: 'InvalidSignatureException',
      message: `Credential should be scoped to correct service: '${opts.service ?? 'bedrock'}'.`,
    };
  if (key.sessionToken !== undefined) {
    if (one(opts.headers['x-amz-security-token']) !== key.sessionToken) {
      return { ok: false, status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
    }
    if (key.expired) return { ok: false, status: 403, type: 'ExpiredTokenException', message: 'The security token included in the request is expired' };
  }
  const date = amzDate(one(opts.headers['x-amz-date']));
  const signed = signedList!.split(';');
  const headers: Record<string, string> = {};
  for (const h of signed) headers[h] = one(opts.headers[h]);
  const [path, qs = ''] = opts.rawPath.split('?');
  const signer = new SignatureV4({
    service: service!,
    region: region!,
    sha256: NodeSha256,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey, sessionToken: key.sessionToken },
  });
  const again = await signer.sign(
    {
      method: opts.method,
      protocol: 'http:',
      hostname: headers.host ?? '',
      path: path!,
      query: Object.fromEntries(new URLSearchParams(qs)),
      headers,
      body: opts.body,
    },
    { signingDate: date },
  );
  const ours = /Signature=([0-9a-f]{64})/.exec(one(again.headers.authorization))?.[1];
  const oursSigned = /SignedHeaders=([^,]+)/.exec(one(again.headers.authorization))?.[1];
  if (ours !== signature || oursSigned !== signedList) return { ok: false, status: 403, type: 'InvalidSignatureException', message: MISMATCH };
  return { ok: true, who: akid! };
}
