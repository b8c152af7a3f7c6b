-- Removes a key gone from config, unless revoked: a revoked key stays, revoked. Returns 1 if removed.
-- KEYS: record
-- ARGV:
if redis.call('HGET', KEYS[1], 'revoked') == '1' then return 0 end
redis.call('DEL', KEYS[1])
return 1
