-- Shared by admit.lua and settle.lua (prepended when the scripts are loaded).
-- A hold record is "<key>|<month>|<holdNano>|<tokens>" (object names never contain '|').

local WINDOW = 60000
-- Lua's unpack() is bounded by the C stack: big lists go in slices.
local SLICE = 1000

local function parse_hold(rec)
  return string.match(rec, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
end

-- Releases one hold: the account's held total and the key's held amount in the hold's month.
local function release(acct, holds, holdrec, held, id, rec)
  local key, month, nano = parse_hold(rec)
  redis.call('HINCRBY', acct, 'held', -tonumber(nano))
  redis.call('HINCRBY', held, month .. '|' .. key, -tonumber(nano))
  redis.call('HDEL', holdrec, id)
  redis.call('ZREM', holds, id)
  return key, month
end

-- Holds past their deadline belong to a replica that never settled them (it crashed): release them.
local function reclaim(acct, holds, holdrec, held, now)
  local ids = redis.call('ZRANGEBYSCORE', holds, '-inf', now, 'LIMIT', 0, 1000)
  for _, id in ipairs(ids) do
    local rec = redis.call('HGET', holdrec, id)
    if rec then
      release(acct, holds, holdrec, held, id, rec)
    else
      redis.call('ZREM', holds, id)
    end
  end
end

-- Drops token-window entries at or before `cutoff` and takes their tokens off the running sum.
local function trim_tokens(tpm, tpmn, cutoff)
  local expired = redis.call('ZRANGEBYSCORE', tpm, '-inf', cutoff)
  local drop = 0
  for i = 1, #expired, SLICE do
    local part = { unpack(expired, i, math.min(i + SLICE - 1, #expired)) }
    local ns = redis.call('HMGET', tpmn, unpack(part))
    for j = 1, #ns do drop = drop + (tonumber(ns[j]) or 0) end
    redis.call('HDEL', tpmn, unpack(part))
  end
  if #expired > 0 then
    redis.call('HINCRBY', tpmn, '_sum', -drop)
    redis.call('ZREMRANGEBYSCORE', tpm, '-inf', cutoff)
  end
end
