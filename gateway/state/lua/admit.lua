-- Admission: one atomic step per call, mirroring decideAdmission in gateway/state/admission.ts
-- (same checks, same order). Returns {'ok'} or {refusal, waitMs}, and for 'budget' and 'balance' what is left of it.
-- KEYS: acct revoked holds holdrec spend held calls tpmn keyexp   (all in the account's hash slot)
-- ARGV: id keyHash keyName now month rpm tpm budget tokens holdNano deadline keyRevoked   (-1 = no limit)
-- `calls` is the key's sliding log (call id -> admission time, last 60 s): its size is the RPM count, and its
-- entries index the tokens counted in tpmn for TPM. `keyexp` holds each key's expiry (ms), judged against the
-- server's TIME: one clock for every replica, whatever their own clocks say.
local acct, revoked, holds, holdrec, spend, held, calls, tpmn, keyexp =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local id, hash, key = ARGV[1], ARGV[2], ARGV[3]
local now, month = tonumber(ARGV[4]), ARGV[5]
local rpm, tpm, budget = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local tokens, hold_nano = tonumber(ARGV[9]), tonumber(ARGV[10])

local bad = check_amounts({ 'tokens', 'holdNano' }, { ARGV[9], ARGV[10] })
if bad then return bad end
if not now or not rpm or not tpm or not budget or not tonumber(ARGV[11]) then
  return redis.error_reply('svc: admit needs numeric now, limits and deadline')
end

-- Redis lost the account's money (restarted empty, flushed, failed over to a replica that had none), or serves it
-- from a promoted replica not yet checked against the record: no admission on it until it is rebuilt or caught up.
local refused = money_refusal(acct)
if refused then return refused end

reclaim(acct, holds, holdrec, held, now)
-- The same call admitted twice (a resent command) holds once.
if redis.call('HEXISTS', holdrec, id) == 1 then return { 'ok', 0 } end

if ARGV[12] == '1' or redis.call('SISMEMBER', revoked, hash) == 1 then return { 'revoked', 0 } end
local expires = tonumber(redis.call('HGET', keyexp, hash) or '')
if expires then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) >= expires then return { 'expired', 0 } end
end

trim_tokens(calls, tpmn, now - WINDOW)
if rpm >= 0 then
  local n = redis.call('ZCARD', calls)
  if n >= rpm then
    local oldest = now
    local at = redis.call('ZRANGE', calls, n - rpm, n - rpm, 'WITHSCORES')
    if at[2] then oldest = tonumber(at[2]) end
    return { 'rpm', oldest + WINDOW - now }
  end
end

if tpm >= 0 then
  if tokens > tpm then return { 'tpm_size', WINDOW } end
  local used = tonumber(redis.call('HGET', tpmn, '_sum') or '0')
  if used + tokens > tpm then
    local free = used + tokens - tpm
    local wait = WINDOW
    -- The oldest calls first, a page at a time: a refusal reads as far as enough tokens leave the window (usually the
    -- first page), not the whole window (tens of thousands of calls on a busy key).
    local from, page, found = 0, 64, false
    while not found do
      local entries = redis.call('ZRANGE', calls, from, from + page - 1, 'WITHSCORES')
      if #entries == 0 then break end
      local ids = {}
      for i = 1, #entries, 2 do ids[#ids + 1] = entries[i] end
      local ns = redis.call('HMGET', tpmn, unpack(ids))
      for j = 1, #ids do
        free = free - (tonumber(ns[j]) or 0)
        if free <= 0 then
          wait = tonumber(entries[2 * j]) + WINDOW - now
          found = true
          break
        end
      end
      from = from + page
      if page < 512 then page = page * 2 end
    end
    return { 'tpm', wait }
  end
end

local mk = month .. '|' .. key
if budget >= 0 then
  local committed = tonumber(redis.call('HGET', spend, mk) or '0') + tonumber(redis.call('HGET', held, mk) or '0')
  -- The third value is what is left, for the refusal's message (admission.ts toDecision).
  if committed + hold_nano > budget then return { 'budget', 0, budget - committed } end
end

local a = redis.call('HMGET', acct, 'credited', 'spent', 'held')
local available = (tonumber(a[1]) or 0) - (tonumber(a[2]) or 0) - (tonumber(a[3]) or 0)
if hold_nano > available then return { 'balance', 0, available } end

redis.call('ZADD', calls, now, id)
redis.call('HSET', tpmn, id, ARGV[9])
add(tpmn, '_sum', ARGV[9])
-- Window data of an idle key goes away on its own once every entry is out of the window.
redis.call('PEXPIRE', calls, 2 * WINDOW)
redis.call('PEXPIRE', tpmn, 2 * WINDOW)
add(held, mk, ARGV[10])
add(acct, 'held', ARGV[10])
redis.call('ZADD', holds, ARGV[11], id)
redis.call('HSET', holdrec, id, key .. '|' .. month .. '|' .. ARGV[10] .. '|' .. ARGV[9])
return { 'ok', 0 }
