// A real redis-server that only speaks TLS (certificates made here with openssl: a CA, a server certificate for
// 127.0.0.1, a client certificate) and takes its users from an ACL file. Never skipped: without redis-server or
// openssl it fails and says how to get them.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './host.ts';

const run = promisify(execFile);

const HOW_TO_GET =
  "redis-server (built with TLS, as Debian's is) and openssl are needed for the Redis TLS/ACL tests: install them " +
  '(Debian/Ubuntu: `apt-get install redis-server openssl`).';

export interface Certs {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd, timeout: 30_000 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(HOW_TO_GET, { cause: err });
    throw new Error(`openssl ${args[0]} failed: ${(err as { stderr?: string }).stderr ?? String(err)}`, { cause: err });
  }
}

/** A throwaway CA, a server certificate for 127.0.0.1 / localhost and a client certificate, all signed by the CA. */
export async function makeCerts(dir: string): Promise<Certs> {
  const p = (f: string): string => join(dir, f);
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=svc-test-ca', '-keyout', 'ca.key', '-out', 'ca.crt'], dir);
  writeFileSync(p('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(p('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, ext] of [
    ['server', 'server.ext'],
    ['client', 'client.ext'],
  ] as const) {
    await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=svc-test-${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
    await openssl(
      ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', `${name}.crt`],
      dir,
    );
  }
  return { dir, ca: p('ca.crt'), serverCert: p('server.crt'), serverKey: p('server.key'), clientCert: p('client.crt'), clientKey: p('client.key') };
}

export interface SecureRedis {
  /** TLS port (the plain port is closed). */
  port: number;
  certs: Certs;
  /** rediss://user:password@127.0.0.1:port */
  url(user: string, password: string): string;
  stop(): Promise<void>;
}

/** `acl`: the ACL file's lines. `clientCerts`: the server asks every client for a certificate signed by the CA. */
export async function startSecureRedis(acl: string[], opts: { clientCerts?: boolean } = {}): Promise<SecureRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-tls-'));
  let child: ChildProcess | null = null;
  try {
    const certs = await makeCerts(dir);
    writeFileSync(join(dir, 'users.acl'), `${acl.join('\n')}\n`);
    const port = await freePort();
    child = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--loglevel',
        'warning',
        '--tls-cert-file',
        certs.serverCert,
        '--tls-key-file',
        certs.serverKey,
        '--tls-ca-cert-file',
        certs.ca,
        '--tls-auth-clients',
        opts.clientCerts ? 'yes' : 'no',
        '--aclfile',
        join(dir, 'users.acl'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const proc = child;
    await new Promise<void>((resolve, reject) => {
      proc.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(HOW_TO_GET) : err));
      proc.once('exit', (code) => reject(new Error(`redis-server (TLS) exited with ${code}: ${out}`)));
      const end = Date.now() + 10_000;
      const poll = (): void => {
        if (/Ready to accept connections/i.test(out)) return resolve();
        if (Date.now() > end) return reject(new Error(`redis-server (TLS) did not start: ${out}`));
        setTimeout(poll, 50);
      };
      // loglevel warning hides the banner: wait for the TLS port to accept instead.
      void waitForPort(port, end).then(resolve, () => poll());
    });
    return {
      port,
      certs,
      url: (user, password) => `rediss://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}`,
      stop: async () => {
        if (proc.exitCode === null && proc.signalCode === null) {
          const gone = new Promise((r) => proc.once('exit', r));
          proc.kill('SIGTERM');
          await gone;
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function waitForPort(port: number, end: number): Promise<void> {
  const { connect } = await import('node:net');
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
