-- Releases what is left of a hold without charging anything (a batch whose lines are all charged by settle-line.lua).
-- KEYS: acct holds holdrec held lines   (all in the account's hash slot)
-- ARGV: id now
local acct, holds, holdrec, held, lines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now = tonumber(ARGV[2])
if not now then return redis.error_reply('svc: release-hold needs a numeric now') end
local refused = money_refusal(acct)
if refused then return refused end
reclaim(acct, holds, holdrec, held, now)
local rec = redis.call('HGET', holdrec, ARGV[1])
if rec then release(acct, holds, holdrec, held, ARGV[1], rec) end
-- The line ids stay a day more: a late re-read of the results still finds them charged.
redis.call('PEXPIRE', lines, 86400000)
return 1
