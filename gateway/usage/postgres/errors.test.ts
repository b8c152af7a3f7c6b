import { describe, expect, it } from 'vitest';
import { errorText, isDataError, sqlState } from './errors.ts';

const pgErr = (code: string): Error => Object.assign(new Error('boom'), { code });

describe('isDataError', () => {
  it.each([
    ['22P02 invalid text representation', pgErr('22P02'), true],
    ['22021 NUL byte in text', pgErr('22021'), true],
    ['23502 not-null violation', pgErr('23502'), true],
    ['54000 program limit exceeded', pgErr('54000'), true],
    ['57P01 admin shutdown', pgErr('57P01'), false],
    ['40P01 deadlock', pgErr('40P01'), false],
    ['42P01 undefined table', pgErr('42P01'), false],
    ['ECONNREFUSED (a Node error code)', pgErr('ECONNREFUSED'), false],
    ['a plain error', new Error('Connection terminated unexpectedly'), false],
    ['not an error', 'x', false],
  ])('%s', (_name, err, poison) => {
    expect(isDataError(err)).toBe(poison);
  });

  it('names the SQLSTATE in messages', () => {
    expect(sqlState(pgErr('ECONNREFUSED'))).toBeNull();
    expect(errorText(pgErr('22P02'))).toBe('22P02: boom');
  });
});
