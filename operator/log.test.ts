// The operator's log lines: JSON, the level filter, errors on one short line.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createLogger, parseLevel } from './log.ts';

describe('createLogger', () => {
  it('writes one JSON object per line, with the fields it was given and those of with()', () => {
    const lines: string[] = [];
    const log = createLogger('info', { component: 'operator' }, (l) => lines.push(l)).with({ ApiKey: 'ns/k' });
    log.info('Generated key', { Secret: 'k-key' });
    log.debug('not shown');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 'info', msg: 'Generated key', component: 'operator', ApiKey: 'ns/k', Secret: 'k-key' });
  });

  it('shortens API errors to their status and message', () => {
    const lines: string[] = [];
    const body = JSON.stringify({ kind: 'Status', message: 'storage is (re)initializing', code: 429 });
    createLogger('warn', {}, (l) => lines.push(l)).warn('Watch failed', { error: new ApiException(429, 'HTTP-Code: 429 ... Headers: {...}', body, {}) });
    expect(JSON.parse(lines[0] as string).error).toBe('HTTP 429: storage is (re)initializing');
  });

  it('refuses an unknown LOG_LEVEL', () => {
    expect(parseLevel(undefined)).toBe('info');
    expect(() => parseLevel('verbose')).toThrow(/LOG_LEVEL must be one of error, warn, info, debug/);
  });
});
