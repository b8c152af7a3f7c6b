-- /v1/me in one consistent read.
-- KEYS: acct spend
-- ARGV: month keyName
-- Returns {credited, spent, key's spend this month, account's spend this month, key's cache hits this month, what
-- they saved}.
-- Redis lost the account's money (no `trial` in its record): 503 until the rebuild, never a balance of 0.
-- On a promoted replica not yet checked against the ledger (`node` is another's, lib.lua), likewise: its balance may
-- miss the last settles.
local m = redis.call('HMGET', KEYS[1], 'trial', 'node')
if not m[1] then
  return redis.error_reply('SVCUNREADY the account\'s money state is not in Redis (lost; waiting for its rebuild)')
end
if m[2] and m[2] ~= redis.call('CLUSTER', 'MYID') then
  return redis.error_reply('SVCUNREADY the account\'s money is on a promoted replica (waiting for its check against the ledger)')
end
local a = redis.call('HMGET', KEYS[1], 'credited', 'spent')
local m = ARGV[1] .. '|' .. ARGV[2]
local s = redis.call('HMGET', KEYS[2], m, ARGV[1], 'hits:' .. m, 'saved:' .. m)
return { a[1] or '0', a[2] or '0', s[1] or '0', s[2] or '0', s[3] or '0', s[4] or '0' }
