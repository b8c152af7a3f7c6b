-- Response cache write: stores one entry with its expiry inside the account's byte budget. Expired entries go
-- first; then, while the budget would be exceeded, the entry that expires soonest (with one TTL per route: the
-- oldest). Returns { stored (1|0), evicted (entries removed to make room) }. The three keys expire as a whole at
-- their latest entry's expiry, so an idle account's cache leaves Redis on its own.
-- KEYS: entries index sizes   (all in the account's hash slot)
-- ARGV: sha entryJson ttlMs now budgetBytes
local entries, index, sizes = KEYS[1], KEYS[2], KEYS[3]
local sha, value = ARGV[1], ARGV[2]
local ttl, now, budget = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if not ttl or ttl <= 0 or not now or not budget then
  return redis.error_reply('svc: cache-put needs a positive ttlMs and numeric now and budgetBytes')
end
local size = string.len(value)
if size > budget then return { 0, 0 } end

local function drop(member)
  local s = tonumber(redis.call('HGET', sizes, member) or '0') or 0
  redis.call('HDEL', entries, member)
  redis.call('HDEL', sizes, member)
  redis.call('ZREM', index, member)
  if s > 0 then redis.call('HINCRBY', sizes, '_sum', -s) end
end

-- Expired entries, a bounded number per put (each put removes some: the rest go with later puts or the key TTL).
for _, m in ipairs(redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, 256)) do drop(m) end
-- The same request stored again (two concurrent misses) replaces its entry.
if redis.call('ZSCORE', index, sha) then drop(sha) end

local evicted = 0
local sum = tonumber(redis.call('HGET', sizes, '_sum') or '0') or 0
while sum + size > budget do
  local first = redis.call('ZRANGE', index, 0, 0)
  if #first == 0 then
    -- Sizes without entries (Redis evicted part of the account's cache): the budget starts over. (No DEL: the
    -- gateway's ACL user runs only the commands of gateway/state/redis-acl.ts; stale sizes expire with the key.)
    redis.call('HSET', sizes, '_sum', '0')
    sum = 0
    break
  end
  drop(first[1])
  evicted = evicted + 1
  sum = tonumber(redis.call('HGET', sizes, '_sum') or '0') or 0
end

redis.call('HSET', entries, sha, value)
redis.call('HSET', sizes, sha, size)
redis.call('HINCRBY', sizes, '_sum', size)
redis.call('ZADD', index, now + ttl, sha)
local last = redis.call('ZRANGE', index, -1, -1, 'WITHSCORES')
local keep = math.max(tonumber(last[2]) - now, ttl)
redis.call('PEXPIRE', entries, keep)
redis.call('PEXPIRE', index, keep)
redis.call('PEXPIRE', sizes, keep)
return { 1, evicted }
