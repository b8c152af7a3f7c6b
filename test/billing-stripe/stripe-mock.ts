// stripe-mock (Stripe's local API server, checked against Stripe's OpenAPI spec) for the billing tests, started on
// loopback ports it picks; the port is read from its "Listening for HTTP at address:" line. Never skipped: without the
// binary a test fails and says how to get it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const BIN =
  process.env.SVC_STRIPE_MOCK ??
  join(process.env.SVC_TOOLS_BIN ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'svc-gateway', 'bin'), 'stripe-mock');

const HOW_TO_GET =
  `stripe-mock is needed for the billing tests and was not found at ${BIN}: run ` +
  '`bash test/billing-stripe/install-stripe-mock.sh` (go install of github.com/stripe/stripe-mock@v0.197.0; .ci/run does this), ' +
  'or set SVC_STRIPE_MOCK to a stripe-mock binary.';

export interface StripeMock {
  /** http://127.0.0.1:<port>, for STRIPE_API_BASE. */
  url: string;
  stop(): Promise<void>;
}

export async function startStripeMock(): Promise<StripeMock> {
  if (!existsSync(BIN)) throw new Error(HOW_TO_GET);
  const child: ChildProcess = spawn(BIN, ['-http-addr', '127.0.0.1:0', '-https-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`stripe-mock printed no HTTP address in 20 s: ${out}`)), 20_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /Listening for HTTP at address: ([0-9.]+:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stripe-mock exited with ${code}: ${out}`));
    });
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
