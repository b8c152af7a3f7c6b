// The reference pages are generated (npm run docs:gen); a committed page that differs from its sources fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { referencePages } from './pages.ts';
import { helpEntries } from './settings.ts';

const root = join(import.meta.dirname, '..', '..');

describe('docs/reference', () => {
  // Runs each process's --help: a few seconds of process start-up on a busy machine.
  it('is what `npm run docs:gen` writes from the current sources', { timeout: 120_000 }, async () => {
    for (const [path, text] of await referencePages(root)) {
      expect(readFileSync(join(root, path), 'utf8'), `${path} is stale: run \`npm run docs:gen\` and commit the result`).toBe(text);
    }
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
