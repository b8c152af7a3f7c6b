// A throwaway self-signed certificate for 127.0.0.1 (MSAL refuses an authority that is not https), made with the
// openssl command line into a temporary folder; a child process trusts it through NODE_EXTRA_CA_CERTS.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoopbackCert {
  cert: string;
  key: string;
  /** The certificate's file, for NODE_EXTRA_CA_CERTS. */
  certFile: string;
}

export function loopbackCert(): LoopbackCert {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fake-entra-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'pipe' },
    );
  } catch (err) {
    throw new Error(`the fake Entra ID needs the openssl command line for its certificate (apt-get install openssl): ${String(err)}`, { cause: err });
  }
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile };
}
