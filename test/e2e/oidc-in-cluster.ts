// The OpenID provider of node.test.ts's step 7b, in the cluster: a Service (its ClusterIP is the issuer's address, which
// the console's pod and the host's browser both reach on the local node), a throwaway CA and a certificate for that
// address made with openssl, and a pod running oidc-provider-pod.ts from the project's image with the repository's
// node_modules mounted from the host. Also the objects the console's chart values name: the client secret's Secret and
// the CA's ConfigMap.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/process.ts';

export const PROVIDER = 'oidc-provider';
export const CLIENT_SECRET_SECRET = 'console-oidc';
export const CA_CONFIGMAP = 'console-oidc-ca';

function sh(script: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script], { cwd, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${script}\nfailed: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/** A CA (one day) and a certificate it signs for the IP address `ip` (serverAuth): PEM texts. */
export async function throwawayCa(ip: string): Promise<{ ca: string; cert: string; key: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-oidc-ca-'));
  try {
    writeFileSync(join(dir, 'leaf.ext'), `subjectAltName = IP:${ip}\nextendedKeyUsage = serverAuth\nbasicConstraints = critical, CA:FALSE\n`);
    await sh(
      [
        'openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj /CN=svc-e2e-oidc-ca ' +
          '-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign',
        `openssl req -newkey rsa:2048 -nodes -keyout tls.key -out tls.csr -subj /CN=${ip}`,
        'openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out tls.crt -days 1 -extfile leaf.ext',
      ].join(' && ') + ' 2>&1',
      dir,
    );
    const read = (f: string): string => readFileSync(join(dir, f), 'utf8');
    return { ca: read('ca.crt'), cert: read('tls.crt'), key: read('tls.key') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const providerService = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: PROVIDER },
  spec: { selector: { app: 'e2e-oidc-provider' }, ports: [{ name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' }] },
};

/** The provider's pod: the project's image, this directory's script and the host's node_modules mounted read-only. */
export function providerPod(o: {
  image: string;
  issuer: string;
  clientId: string;
  redirectUri: string;
  users: Record<string, { email: string; groups: string[] }>;
}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: PROVIDER, labels: { app: 'e2e-oidc-provider' } },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 },
      terminationGracePeriodSeconds: 5,
      containers: [
        {
          name: 'provider',
          image: o.image,
          imagePullPolicy: 'Never',
          command: ['node', '/oidc/provider.ts'],
          env: [
            { name: 'OIDC_ISSUER', value: o.issuer },
            { name: 'OIDC_CLIENT_ID', value: o.clientId },
            { name: 'OIDC_REDIRECT_URI', value: o.redirectUri },
            { name: 'OIDC_USERS', value: JSON.stringify(o.users) },
          ],
          ports: [{ name: 'https', containerPort: 8443 }],
          readinessProbe: { tcpSocket: { port: 8443 }, periodSeconds: 1 },
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          volumeMounts: [
            { name: 'script', mountPath: '/oidc/provider.ts', readOnly: true },
            { name: 'modules', mountPath: '/oidc/node_modules', readOnly: true },
            { name: 'tls', mountPath: '/oidc/tls', readOnly: true },
            { name: 'client', mountPath: '/oidc/client', readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: 'script', hostPath: { path: join(ROOT, 'test/e2e/oidc-provider-pod.ts'), type: 'File' } },
        { name: 'modules', hostPath: { path: realpathSync(join(ROOT, 'node_modules')), type: 'Directory' } },
        { name: 'tls', secret: { secretName: `${PROVIDER}-tls` } },
        { name: 'client', secret: { secretName: CLIENT_SECRET_SECRET } },
      ],
    },
  };
}

/** The issuer's discovery document's status, fetched from the host trusting only `ca` (a wrong certificate: 0). */
export function discoveryStatus(issuer: string, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${issuer}/.well-known/openid-configuration`, { ca, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
