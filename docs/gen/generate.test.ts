// The reference pages are generated (npm run docs:gen); a committed page that differs from its sources fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { referencePages } from './pages.ts';
import { helpEntries } from './settings.ts';

const root = join(import.meta.dirname, '..', '..');

let pages: Map<string, string>;

// Runs each process's --help: a few seconds of process start-up on a busy machine.
beforeAll(async () => {
  pages = await referencePages(root);
}, 120_000);

describe('docs/reference', () => {
  it('is what `npm run docs:gen` writes from the current sources', () => {
    for (const [path, text] of pages) {
      expect(readFileSync(join(root, path), 'utf8'), `${path} is stale: run \`npm run docs:gen\` and commit the result`).toBe(text);
    }
  });

  it('explains every environment variable the code reads, in a --help or a page of docs/', () => {
    const unexplained = (pages.get('docs/reference/settings.md') ?? '')
      .split('\n')
      .filter((row) => row.includes('| not in any `--help` |  |'))
      .map((row) => row.split(' | ')[0]?.replace(/^\| /, ''));
    expect(unexplained, 'say what each does and its default in the --help of its process, or in the docs page of its topic').toEqual([]);
  });

  it('reads each setting out of a --help text, its default included', () => {
    const help = [
      'Environment:',
      '  PORT            listen port (8080)             HOST        listen address (0.0.0.0)',
      '  SVC_X_MS a wait',
      '                  in ms (10)',
      '  PORT (8090), LOG_LEVEL (info)',
      '',
      'Other text.',
    ].join('\n');
    expect(Object.fromEntries(helpEntries(help))).toEqual({
      PORT: 'listen port (8080)',
      HOST: 'listen address (0.0.0.0)',
      SVC_X_MS: 'a wait in ms (10)',
      LOG_LEVEL: '(info)',
    });
  });
});
