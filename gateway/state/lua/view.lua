-- /v1/me in one consistent read.
-- KEYS: acct spend
-- ARGV: month keyName
-- Returns {credited, spent, key's spend this month, account's spend this month}.
local a = redis.call('HMGET', KEYS[1], 'credited', 'spent')
local s = redis.call('HMGET', KEYS[2], ARGV[1] .. '|' .. ARGV[2], ARGV[1])
return { a[1] or '0', a[2] or '0', s[1] or '0', s[2] or '0' }
