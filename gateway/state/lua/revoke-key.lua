-- Revokes a key for good (a tombstone if the key is unknown yet). KEYS: record   Returns the record JSON or false.
redis.call('HSET', KEYS[1], 'revoked', '1')
return redis.call('HGET', KEYS[1], 'record')
