import { describe, expect, it } from 'vitest';
import { readMessage, RpcRefusal } from './jsonrpc.ts';

describe('readMessage', () => {
  it.each<[string, unknown, string]>([
    ['a request', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, 'request'],
    ['a request with a string id and params', { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x' } }, 'request'],
    ['a notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    ['a response', { jsonrpc: '2.0', id: 'svc~s~1', result: {} }, 'response'],
    ['an error response', { jsonrpc: '2.0', id: 3, error: { code: -1, message: 'no' } }, 'response'],
  ])('reads %s', (_n, body, kind) => {
    expect(readMessage(body).kind).toBe(kind);
  });

  it('keeps only the fields it knows of a request (no smuggled extras upstream)', () => {
    const m = readMessage({ jsonrpc: '2.0', id: 1, method: 'ping', extra: 'x' });
    expect(m.msg).toEqual({ jsonrpc: '2.0', id: 1, method: 'ping' });
  });

  it.each<[string, unknown, RegExp]>([
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], /Batches are not supported/],
    ['a string', 'ping', /one JSON-RPC 2.0 message/],
    ['null', null, /one JSON-RPC 2.0 message/],
    ['JSON-RPC 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }, /one JSON-RPC 2.0 message/],
    ['an empty method', { jsonrpc: '2.0', id: 1, method: '' }, /1 to 256/],
    ['a huge method', { jsonrpc: '2.0', id: 1, method: 'x'.repeat(300) }, /1 to 256/],
    ['an object id', { jsonrpc: '2.0', id: {}, method: 'ping' }, /id must be/],
    ['a NaN-like id', { jsonrpc: '2.0', id: true, method: 'ping' }, /id must be/],
    ['array params', { jsonrpc: '2.0', id: 1, method: 'ping', params: [] }, /params must be an object/],
    ['neither', { jsonrpc: '2.0', id: 1 }, /neither a request/],
  ])('refuses %s with a 400', (_n, body, message) => {
    let err: unknown;
    try {
      readMessage(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RpcRefusal);
    expect((err as RpcRefusal).status).toBe(400);
    expect((err as RpcRefusal).message).toMatch(message);
  });
});
