-- Stages the ids of the usage events the ledger recorded lately for one account's restore (gateway/state/money-restore.ts),
-- a slice at a time, so a busy account's hundreds of thousands of ids never block Redis in one step:
-- restore-account.lua moves the staged set into `settled` in its atomic step (a rename), or drops it when the
-- account's money turned out to be live. Nothing is staged for a live account; the staged set expires on its own if
-- the restore never comes (a process that died in between).
-- KEYS: acct stage   (both in the account's slot {a:<account>})
-- ARGV: ttlMs ...pairs   (pairs: score, id, score, id, ...; a score is the time the id is remembered from, ms)
-- Returns 1 when staged, 0 when the account's money is live (the restore will do nothing).
local acct, stage = KEYS[1], KEYS[2]
if redis.call('HEXISTS', acct, 'trial') == 1 or redis.call('HEXISTS', acct, 'restored') == 1 then return 0 end
local ttl = tonumber(ARGV[1])
if not ttl or ttl <= 0 or #ARGV < 3 or (#ARGV - 1) % 2 ~= 0 then return redis.error_reply('svc: stage needs a TTL and score, id pairs') end
for i = 2, #ARGV, 2 do
  if not tonumber(ARGV[i]) then return redis.error_reply('svc: stage score is not a number') end
end
for i = 2, #ARGV, 2 * SLICE do
  redis.call('ZADD', stage, unpack(ARGV, i, math.min(i + 2 * SLICE - 1, #ARGV)))
end
redis.call('PEXPIRE', stage, ttl)
return 1
