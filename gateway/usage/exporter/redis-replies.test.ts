import { describe, expect, it } from 'vitest';
import { autoclaimReply, consumersReply, deliveriesReply, groupsReply, oldestPendingReply, readReply } from './redis-replies.ts';

describe('Redis Stream replies', () => {
  it('reads XREADGROUP, skipping entries deleted while pending', () => {
    expect(
      readReply([
        [
          's1',
          [
            ['1-0', ['v', '1']],
            ['2-0', null],
          ],
        ],
        ['s2', [['3-0', ['v', '1', 'event', '{}']]]],
      ]),
    ).toEqual([
      { stream: 's1', id: '1-0', fields: ['v', '1'] },
      { stream: 's1', id: '2-0', fields: [] },
      { stream: 's2', id: '3-0', fields: ['v', '1', 'event', '{}'] },
    ]);
    expect(readReply(null)).toEqual([]);
  });

  it('reads XAUTOCLAIM with and without the deleted ids (Redis 7 and 6.2)', () => {
    expect(autoclaimReply('s', ['5-0', [['4-0', ['v', '1']]], ['3-0']])).toEqual({
      next: '5-0',
      entries: [{ stream: 's', id: '4-0', fields: ['v', '1'] }],
      deleted: ['3-0'],
    });
    expect(autoclaimReply('s', ['0-0', []])).toEqual({ next: '0-0', entries: [], deleted: [] });
  });

  it('reads XINFO GROUPS, lag null when Redis cannot tell', () => {
    const raw = [['name', 'usage-export', 'consumers', 2, 'pending', 3, 'last-delivered-id', '9-1', 'entries-read', null, 'lag', null]];
    expect(groupsReply(raw)).toEqual([{ name: 'usage-export', lastDelivered: '9-1', pending: 3, lag: null }]);
  });

  it('reads XPENDING summary and extended forms, and XINFO CONSUMERS', () => {
    expect(oldestPendingReply([2, '7-0', '8-0', [['c', '2']]])).toBe('7-0');
    expect(oldestPendingReply([0, null, null, null])).toBeNull();
    expect(
      deliveriesReply([
        ['7-0', 'c', 1200, 3],
        ['8-0', 'c', 10, 1],
      ]),
    ).toEqual(
      new Map([
        ['7-0', 3],
        ['8-0', 1],
      ]),
    );
    expect(consumersReply([['name', 'c', 'pending', 0, 'idle', 5000]])).toEqual([{ name: 'c', pending: 0, idleMs: 5000 }]);
  });
});
