-- Shared by admit.lua and settle.lua (prepended when the scripts are loaded).
-- A hold record is "<key>|<month>|<holdNano>|<tokens>" (object names never contain '|').
--
-- Amounts reach Redis only as decimal integer strings, through add(): Lua numbers are doubles, and a double
-- becomes "-0" (unary minus of 0) or "1e+17" when Redis turns it into an argument, both refused by HINCRBY. A
-- script that fails after a write is not rolled back, so every script checks its input before its first write.

local WINDOW = 60000
-- Lua's unpack() is bounded by the C stack: big lists go in slices.
local SLICE = 1000

-- A non-negative decimal integer string ("0", "42"; no sign, no leading zero, at most 18 digits: below 2^63).
local function is_amount(s)
  return type(s) == 'string' and #s <= 18 and (s == '0' or string.match(s, '^[1-9][0-9]*$') ~= nil)
end

-- Refuses the script before any write when an argument is not an amount.
local function check_amounts(names, values)
  for i = 1, #names do
    if not is_amount(values[i]) then
      return redis.error_reply('svc: ' .. names[i] .. ' is not a non-negative integer: ' .. tostring(values[i]))
    end
  end
  return nil
end

-- HINCRBY by a signed decimal string; nothing is written for zero.
local function add(key, field, amount)
  if amount ~= '0' and amount ~= '-0' and amount ~= '' then redis.call('HINCRBY', key, field, amount) end
end

-- The negation of an amount string, exact at any size, never "-0".
local function negate(amount)
  if amount == '0' then return '0' end
  return '-' .. amount
end

-- A small integer (token counts, far below 2^53) as a decimal string, never "-0".
local function int_string(n)
  if n == 0 then return '0' end
  return string.format('%.0f', n)
end

-- An account's money state is in Redis when its record holds `trial` (set once, when the trial is granted or
-- restored). Without it Redis lost its data (or the account was never published): money scripts refuse, so the
-- gateway answers 503 until the state is rebuilt from the Postgres ledger (gateway/state/money-guard.ts).
-- On a Redis Cluster with a ledger, the record also holds `node`: the id of the master on which the account's money
-- was last checked against the ledger. Another node serving it is a replica promoted since, which may have missed the
-- last settles (asynchronous replication): the money scripts refuse until the account is caught up from the ledger
-- (catch-up.lua). A replica copies `node` as it is, so only a promotion makes the two differ.
local UNREADY = 'SVCUNREADY the account\'s money state is not in Redis (lost; waiting for its rebuild)'
local STALE = 'SVCUNREADY the account\'s money is on a promoted replica (waiting for its check against the ledger)'
local function money_refusal(acct)
  local m = redis.call('HMGET', acct, 'trial', 'node')
  if not m[1] then return redis.error_reply(UNREADY) end
  if m[2] and m[2] ~= redis.call('CLUSTER', 'MYID') then return redis.error_reply(STALE) end
  return nil
end

local function parse_hold(rec)
  return string.match(rec, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
end

-- Releases one hold: the account's held total and the key's held amount in the hold's month. A record that does
-- not parse (written by no version of this code) is dropped without touching the totals.
local function release(acct, holds, holdrec, held, id, rec)
  local key, month, nano = parse_hold(rec)
  if key and is_amount(nano) then
    add(acct, 'held', negate(nano))
    add(held, month .. '|' .. key, negate(nano))
  end
  redis.call('HDEL', holdrec, id)
  redis.call('ZREM', holds, id)
  return key, month
end

-- Forgets the settled ids remembered since before `cutoff`, at most 1,000 per call: ids remembered all at once (a
-- rebuild's, hundreds of thousands with one time) leave a few settles at a time, never in one long step. Forgetting
-- late is harmless: an id remembered longer only keeps a retry of its settle a no-op for longer.
local function forget_settled(settled, cutoff)
  local n = redis.call('ZCOUNT', settled, '-inf', cutoff)
  if n > 0 then redis.call('ZREMRANGEBYRANK', settled, 0, math.min(n, 1000) - 1) end
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
    add(tpmn, '_sum', int_string(-drop))
    redis.call('ZREMRANGEBYSCORE', tpm, '-inf', cutoff)
  end
end

-- Takes one call out of its key's window (a call refused after admission gives its RPM and TPM slot back).
local function forget_call(calls, tpmn, id)
  local n = tonumber(redis.call('HGET', tpmn, id) or '0') or 0
  redis.call('HDEL', tpmn, id)
  redis.call('ZREM', calls, id)
  add(tpmn, '_sum', int_string(-n))
end
