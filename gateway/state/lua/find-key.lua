#!lua flags=no-writes
-- A key's lookup with the server's clock, so every replica judges expiry by one clock (Redis's TIME), not its own.
-- Run with EVALSHA_RO and flagged no-writes: a read-only ACL user of the key records may run it (Redis 7.0 or later).
-- KEYS: record
-- ARGV:
-- Returns {recordJson or false, revoked or false, seconds, microseconds}.
local r = redis.call('HMGET', KEYS[1], 'record', 'revoked')
local t = redis.call('TIME')
return { r[1], r[2], t[1], t[2] }
