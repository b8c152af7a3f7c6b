-- Marks a key record revoked for good (a tombstone if the key is unknown yet).
-- KEYS: record
-- ARGV:
redis.call('HSET', KEYS[1], 'revoked', '1')
return 1
