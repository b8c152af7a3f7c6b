// The SDK programs of examples/ as the docs show and run them: a page shows the file's code (its text after the
// opening comment) in one example block, and the command that runs it in another, run here as a reader would run it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './process.ts';

/** examples/<name>.mjs after its opening comment lines: what a page shows of it. */
export function exampleCode(name: string): string {
  const lines = readFileSync(join(ROOT, 'examples', `${name}.mjs`), 'utf8').split('\n');
  const first = lines.findIndex((l) => !l.startsWith('//'));
  return lines.slice(first).join('\n').replace(/^\n+/, '');
}

/**
 * Runs a page's command block with bash from the repository's folder, in `env` (holding SVC_KEY, as the reader
 * exported it), against the gateway at `url` (SVC_URL). `node` on the PATH is the one running the tests.
 */
export function runExampleCommand(script: string, env: NodeJS.ProcessEnv, url: string): string {
  const path = `${dirname(process.execPath)}:${env.PATH ?? ''}`;
  return execFileSync('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env: { ...env, PATH: path, SVC_URL: url }, encoding: 'utf8', timeout: 60_000 });
}
