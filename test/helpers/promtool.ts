// promtool (Debian package `prometheus`, or SVC_PROMTOOL): `check metrics` lints a scrape, `test rules` runs a rules
// unit-test file. Never skipped: without the binary, the error says how to get it.
import { spawn } from 'node:child_process';

const HOW_TO_GET =
  'promtool is needed: install it (Debian/Ubuntu: `apt-get install prometheus`, which ships /usr/bin/promtool; ' +
  '.ci/run does), or set SVC_PROMTOOL to a promtool binary (2.x or 3.x).';

export interface PromtoolResult {
  code: number | null;
  output: string;
}

export function promtool(args: string[], stdin = ''): Promise<PromtoolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.SVC_PROMTOOL || 'promtool', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? new Error(HOW_TO_GET) : err));
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(stdin);
  });
}

/** `promtool check metrics` on a scrape: exit 0 and nothing printed means no error and no lint warning. */
export const checkMetrics = (text: string): Promise<PromtoolResult> => promtool(['check', 'metrics'], text);
