-- Settlement: release the hold, charge the actual cost to the hold's month, fix the token window, append the
-- usage event. Idempotent per hold id: a retried settle returns 0 and changes nothing.
-- KEYS: acct holds holdrec held spend settled tpmn usage   (all in the account's hash slot)
-- ARGV: id keyName month costNano feeNano tokens now settledKeepMs eventJson streamMaxLen
local acct, holds, holdrec, held, spend, settled, tpmn, usage =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local id, key, month = ARGV[1], ARGV[2], ARGV[3]
local cost, fee, tokens, now = ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])

reclaim(acct, holds, holdrec, held, now)
if redis.call('ZSCORE', settled, id) then return 0 end
redis.call('ZADD', settled, now, id)
redis.call('ZREMRANGEBYSCORE', settled, '-inf', now - tonumber(ARGV[8]))

local rec = redis.call('HGET', holdrec, id)
if rec then key, month = release(acct, holds, holdrec, held, id, rec) end

redis.call('HINCRBY', acct, 'spent', cost)
redis.call('HINCRBY', acct, 'fee', fee)
redis.call('HINCRBY', spend, month, cost)
redis.call('HINCRBY', spend, month .. '|' .. key, cost)
redis.call('HINCRBY', spend, 'fee:' .. month, fee)

local old = redis.call('HGET', tpmn, id)
if old then
  redis.call('HSET', tpmn, id, tokens)
  redis.call('HINCRBY', tpmn, '_sum', tokens - tonumber(old))
end

-- No cap by default: the exporter trims below what Postgres committed; a cap (a memory safety net) drops unread events.
if tonumber(ARGV[10]) > 0 then
  redis.call('XADD', usage, 'MAXLEN', '~', ARGV[10], '*', 'v', '1', 'event', ARGV[9])
else
  redis.call('XADD', usage, '*', 'v', '1', 'event', ARGV[9])
end
return 1
