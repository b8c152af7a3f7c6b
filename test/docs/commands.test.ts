// The commands the docs give to run a process work from a checkout after `npm ci`, with whatever `node` the reader's
// shell finds first (often an older one than the sources need): run as written, in a shell whose PATH does not hold
// the checkout's node_modules/.bin, the bundled Node 24 reachable only through npm.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { docExample, docText } from '../helpers/docs.ts';
import { ROOT } from '../helpers/process.ts';

const run = promisify(execFile);

/** The reader's PATH: ours without any node_modules/.bin, the system's binaries (and their node) first. */
function readerPath(): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((d) => d !== '' && !d.includes('node_modules'));
  return ['/usr/local/bin', '/usr/bin', '/bin', ...dirs].join(delimiter);
}

async function runAsWritten(script: string, cwd = ROOT): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: readerPath() };
  for (const k of Object.keys(env)) if (k.startsWith('npm_')) delete env[k];
  const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  return stdout + stderr;
}

describe('the install', () => {
  it('prints no npm warning with the npm on the PATH, whatever its node (engine warnings of an older node)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-npm-ci-'));
    for (const f of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(join(ROOT, f), join(dir, f));
    // --dry-run: the whole install's checks, engines included, without writing node_modules; --offline: from the lock.
    const out = await runAsWritten('npm ci --dry-run --offline --no-audit --no-fund', dir);
    expect(out).toContain('add zod');
    expect(out.split('\n').filter((l) => l.startsWith('npm warn'))).toEqual([]);
  }, 180_000);
});

describe("the docs' commands for each process", () => {
  it('print the gateway help as docs/getting-started.md writes it', async () => {
    const out = await runAsWritten(docExample('docs/getting-started.md', 'help'));
    expect(out).toContain('svc-gateway: OpenAI- and Anthropic-compatible AI gateway');
    expect(out).toContain('SVC_METRICS_PORT');
  }, 180_000);

  it('print the operator help as docs/kubernetes.md writes it', async () => {
    const out = await runAsWritten(docExample('docs/kubernetes.md', 'operator-help'));
    expect(out).toContain('svc-gateway operator');
    expect(out).toContain('WATCH_NAMESPACE');
  }, 180_000);

  it('are never a bare `node <file>.ts --help`, which an older node cannot run', () => {
    const pages = [
      'README.md',
      'charts/svc-gateway/README.md',
      ...readdirSync(`${ROOT}/docs`)
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const bare = pages.flatMap((page) =>
      docText(page)
        .split('\n')
        .filter((line) => /(^|`)node [\w./-]+\.ts\b[^`]*--help/.test(line) && !line.includes('in the image'))
        .map((line) => `${page}: ${line.trim()}`),
    );
    expect(bare, 'write npm start -- --help, npm run <script> -- --help').toEqual([]);
  });
});
