// Certificates of a throwaway control plane, made with the openssl CLI (node:crypto cannot issue X.509):
// a CA, the API server's serving certificate, an admin client certificate in group system:masters, and the
// service-account signing key pair.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pki {
  caCert: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args[0]} failed (is openssl installed? apt-get install openssl): ${stderr || String(err)}`, { cause: err });
  }
}

/** A key and a certificate signed by the CA in `dir` (ca.crt, ca.key). EC P-256: fast to make, Go accepts it. */
function issue(dir: string, name: string, subject: string, extensions: string[]): void {
  openssl(
    [
      'req',
      '-new',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '2',
      '-subj',
      subject,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      ...extensions.flatMap((e) => ['-addext', e]),
    ],
    dir,
  );
}

export function makePki(dir: string): Pki {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      '/CN=svc-gateway-test-ca',
    ],
    dir,
  );
  // kube-apiserver looks for apiserver.crt/.key in --cert-dir.
  issue(dir, 'apiserver', '/CN=kube-apiserver', [
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    'extendedKeyUsage=serverAuth',
    'basicConstraints=critical,CA:FALSE',
  ]);
  issue(dir, 'admin', '/O=system:masters/CN=svc-gateway-test-admin', ['extendedKeyUsage=clientAuth', 'basicConstraints=critical,CA:FALSE']);
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(join(dir, 'sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(join(dir, 'sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }));
  return {
    caCert: join(dir, 'ca.crt'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
}
