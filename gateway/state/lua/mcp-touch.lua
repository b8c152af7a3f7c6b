-- An MCP session's request: 1 when the session is open (then its last use is now), 0 when it is unknown, ended,
-- or idle since before `oldest` (now minus the idle TTL; it is left for the sweep, which ends its upstream sessions).
-- KEYS: idle   (the sessions' last uses, a sorted set)
-- ARGV: sid now oldest
local idle = KEYS[1]
local sid, now, oldest = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local last = tonumber(redis.call('ZSCORE', idle, sid) or '')
if not last or last < oldest then return 0 end
redis.call('ZADD', idle, now, sid)
return 1
