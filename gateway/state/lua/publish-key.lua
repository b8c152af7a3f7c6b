-- Writes a key record; `revoked` only ever goes from 0 to 1, so a stale writer cannot re-activate a key.
-- KEYS: record
-- ARGV: recordJson revoked   (revoked: 0|1)   Returns the revoked flag now stored.
local was = redis.call('HGET', KEYS[1], 'revoked')
local revoked = (was == '1' or ARGV[2] == '1') and '1' or '0'
redis.call('HSET', KEYS[1], 'record', ARGV[1], 'revoked', revoked)
return revoked
