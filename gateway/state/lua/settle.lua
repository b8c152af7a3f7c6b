-- Settlement: release the hold, charge the actual cost to the hold's month, fix the token window, append the
-- usage event. Idempotent per hold id: a retried settle returns 0 and changes nothing.
-- KEYS: acct holds holdrec held spend settled tpmn usage calls   (all in the account's hash slot)
-- ARGV: id keyName month costNano feeNano tokens now settledKeepMs eventJson streamMaxLen freeSlot cacheHit savedNano
-- cacheHit "1": the call was answered from the response cache; the month's hits and what they saved (savedNano)
-- are counted beside the spend (hits:<month>[|<key>], saved:<month>[|<key>]), for /v1/me.
-- freeSlot "1": the call was refused after admission (nothing reached an upstream), so it leaves the key's window
-- (its RPM and TPM slot are given back).
local acct, holds, holdrec, held, spend, settled, tpmn, usage =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local id, key, month = ARGV[1], ARGV[2], ARGV[3]
local cost, fee, tokens, now = ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])

local bad = check_amounts({ 'costNano', 'feeNano', 'tokens', 'savedNano' }, { ARGV[4], ARGV[5], ARGV[6], ARGV[13] })
if bad then return bad end
if not now or not tonumber(ARGV[8]) or not tonumber(ARGV[10]) then
  return redis.error_reply('svc: settle needs numeric now, settledKeepMs and streamMaxLen')
end

-- Not on a Redis that lost the account's money: the settle is retried (idempotent) and lands after the rebuild, on
-- top of the spend restored from Postgres, so the rebuild never counts it twice. On a promoted replica not checked
-- yet, likewise: the catch-up marks the settles the ledger has as settled first, so a retry of one of them is a no-op.
local refused = money_refusal(acct)
if refused then return refused end

reclaim(acct, holds, holdrec, held, now)
if redis.call('ZSCORE', settled, id) then return 0 end
redis.call('ZADD', settled, now, id)
forget_settled(settled, now - tonumber(ARGV[8]))

local rec = redis.call('HGET', holdrec, id)
if rec then
  local k, m = release(acct, holds, holdrec, held, id, rec)
  if k then key, month = k, m end
end

add(acct, 'spent', cost)
add(acct, 'fee', fee)
add(spend, month, cost)
add(spend, month .. '|' .. key, cost)
add(spend, 'fee:' .. month, fee)
if ARGV[12] == '1' then
  add(spend, 'hits:' .. month, '1')
  add(spend, 'hits:' .. month .. '|' .. key, '1')
  add(spend, 'saved:' .. month, ARGV[13])
  add(spend, 'saved:' .. month .. '|' .. key, ARGV[13])
end

if ARGV[11] == '1' then
  forget_call(KEYS[9], tpmn, id)
else
  local old = redis.call('HGET', tpmn, id)
  if old then
    redis.call('HSET', tpmn, id, ARGV[6])
    add(tpmn, '_sum', int_string(tokens - (tonumber(old) or 0)))
  end
end

-- No cap by default: the exporter trims below what Postgres committed; a cap (a memory safety net) drops unread events.
if tonumber(ARGV[10]) > 0 then
  redis.call('XADD', usage, 'MAXLEN', '~', ARGV[10], '*', 'v', '1', 'event', ARGV[9])
else
  redis.call('XADD', usage, '*', 'v', '1', 'event', ARGV[9])
end
return 1
