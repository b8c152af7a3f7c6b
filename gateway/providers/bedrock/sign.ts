// SigV4 for Bedrock (service `bedrock`, the target's region) with @smithy/signature-v4 over the exact body bytes sent,
// SHA-256 from node:crypto. X-Amz-Security-Token goes along with temporary credentials. One signer per region and
// credential provider (the signer caches its derived signing key per day).
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { AwsCredentialIdentityProvider, Checksum, SourceData } from '@smithy/types';

type SignerLike = {
  sign(req: unknown, opts?: { signingDate?: Date }): Promise<{ headers: Record<string, string> }>;
};

/** The Checksum @smithy/signature-v4 asks for: a hash, or an HMAC when given a secret. */
class NodeSha256 implements Checksum {
  private h: Hash | Hmac;
  private readonly secret: SourceData | undefined;
  constructor(secret?: SourceData) {
    this.secret = secret;
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: Uint8Array | string): void {
    this.h.update(typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.h.digest()));
  }
  reset(): void {
    this.h = this.secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(this.secret));
  }
}

function toBuffer(d: SourceData): Buffer {
  if (typeof d === 'string') return Buffer.from(d, 'utf8');
  if (ArrayBuffer.isView(d)) return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  return Buffer.from(d);
}

let SignatureV4: Promise<new (init: object) => SignerLike> | undefined;

function signerClass(): Promise<new (init: object) => SignerLike> {
  SignatureV4 ??= import('@smithy/signature-v4').then((m) => m.SignatureV4 as unknown as new (init: object) => SignerLike);
  return SignatureV4;
}

const signers = new WeakMap<AwsCredentialIdentityProvider, Map<string, SignerLike>>();

async function signerFor(credentials: AwsCredentialIdentityProvider, region: string): Promise<SignerLike> {
  let byRegion = signers.get(credentials);
  if (!byRegion) signers.set(credentials, (byRegion = new Map()));
  let s = byRegion.get(region);
  if (!s) {
    const Signer = await signerClass();
    s = new Signer({ service: 'bedrock', region, credentials, sha256: NodeSha256 });
    byRegion.set(region, s);
  }
  return s;
}

/** Signed headers for one POST: the given ones plus host, x-amz-date, x-amz-security-token and authorization. */
export async function signedHeaders(opts: {
  url: string;
  region: string;
  headers: Record<string, string>;
  body: string;
  credentials: AwsCredentialIdentityProvider;
}): Promise<Record<string, string>> {
  const signer = await signerFor(opts.credentials, opts.region);
  const u = new URL(opts.url);
  const query = Object.fromEntries(u.searchParams);
  const req = {
    method: 'POST',
    protocol: u.protocol,
    hostname: u.hostname,
    port: u.port ? Number(u.port) : undefined,
    path: u.pathname,
    query,
    headers: { ...opts.headers, host: u.host },
    body: opts.body,
  };
  return (await signer.sign(req)).headers;
}

export { NodeSha256 };
