import { describe, expect, it } from 'vitest';
import { redisKeys } from '../contract/redis-keys.ts';
import { SLOTS, slotMarker, slotOf } from './slot-markers.ts';

describe('slot markers', () => {
  it('computes the hash slot as Redis Cluster does (the values of the CLUSTER KEYSLOT documentation)', () => {
    expect(slotOf('somekey')).toBe(11058);
    expect(slotOf('foo{hash_tag}')).toBe(2515);
    expect(slotOf('bar{hash_tag}')).toBe(2515);
  });

  it('names one marker in each of the 16,384 slots', () => {
    const seen = new Set<number>();
    for (let slot = 0; slot < SLOTS; slot++) {
      const key = slotMarker('svc', slot);
      expect(key.startsWith('svc:money:slot:{')).toBe(true);
      expect(slotOf(key)).toBe(slot);
      seen.add(slotOf(key));
    }
    expect(seen.size).toBe(SLOTS);
    expect(redisKeys('svc').moneySlot('x')).toBe('svc:money:slot:{x}');
  });
});
