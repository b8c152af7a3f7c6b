-- One Stripe event applied to one account's money, exactly once, in one atomic step (prepended with lib.lua).
-- KEYS: acct stripe entries   (all in the account's slot {a:<account>})
-- ARGV: op eventId objectId paymentIntent amountNano entryJson
--   op credit       credit amount once per object (a paid Checkout Session cs_…)
--      record       note the object once (a failed or unpaid session), no money
--      refund       refund re_… of amount on paymentIntent: refunded += amount once per refund id
--      refund-total charge.refunded: the payment's refunded total is at least amount (idempotent, max)
--      dispute      debit amount once per dispute, open disputes + 1
--      reinstate    credit amount back once per dispute, open disputes - 1
-- A payment's refunds debit max(sum of refund ids seen, largest refunded total seen) in all: any order, any repeats.
-- Each event id counts once (HSETNX ev:<id>); each object once (HSETNX obj:<id>). Entries: "<deltaNano>|<json>".
-- Returns {verdict, deltaNano}: verdict applied | duplicate-event | duplicate-object | nothing.
local acct, st, entries = KEYS[1], KEYS[2], KEYS[3]
local op, ev, obj, pi, amount, entry = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local OPS = { credit = true, record = true, refund = true, ['refund-total'] = true, dispute = true, reinstate = true }
-- Every input checked before the first write.
if not OPS[op] then return redis.error_reply('svc: unknown billing op ' .. tostring(op)) end
if type(ev) ~= 'string' or ev == '' or type(obj) ~= 'string' or obj == '' then
  return redis.error_reply('svc: billing event and object ids are required')
end
if type(pi) ~= 'string' then return redis.error_reply('svc: payment intent must be a string') end
if (op == 'refund' or op == 'refund-total') and pi == '' then return redis.error_reply('svc: a refund needs its payment intent') end
if not is_amount(amount) or #amount > 15 then return redis.error_reply('svc: amountNano is not an integer below 1e15: ' .. tostring(amount)) end
if type(entry) ~= 'string' then return redis.error_reply('svc: entry must be a string') end

if redis.call('HSETNX', st, 'ev:' .. ev, op .. '|' .. obj) == 0 then return { 'duplicate-event', '0' } end

local function push(delta)
  redis.call('RPUSH', entries, delta .. '|' .. entry)
end

-- The refunds of a payment debit max(known, maxTotal); returns the change of that figure.
local function refunded(known, total)
  if known > total then return known end
  return total
end

if op == 'refund' or op == 'refund-total' then
  local known = tonumber(redis.call('HGET', st, 'rk:' .. pi) or '0')
  local total = tonumber(redis.call('HGET', st, 'rt:' .. pi) or '0')
  local before = refunded(known, total)
  if op == 'refund' then
    if redis.call('HSETNX', st, 'obj:' .. obj, ev) == 0 then return { 'duplicate-object', '0' } end
    known = known + tonumber(amount)
    redis.call('HSET', st, 'rk:' .. pi, int_string(known))
  else
    if tonumber(amount) <= total then return { 'nothing', '0' } end
    total = tonumber(amount)
    redis.call('HSET', st, 'rt:' .. pi, amount)
  end
  local delta = int_string(refunded(known, total) - before)
  if delta == '0' then return { 'nothing', '0' } end
  add(acct, 'credited', negate(delta))
  push(negate(delta))
  return { 'applied', negate(delta) }
end

if redis.call('HSETNX', st, 'obj:' .. obj, ev) == 0 then return { 'duplicate-object', '0' } end
if op == 'credit' then
  add(acct, 'credited', amount)
  push(amount)
  return { 'applied', amount }
elseif op == 'record' then
  push('0')
  return { 'applied', '0' }
elseif op == 'dispute' then
  add(acct, 'credited', negate(amount))
  redis.call('HINCRBY', acct, 'disputes', 1)
  push(negate(amount))
  return { 'applied', negate(amount) }
else
  add(acct, 'credited', amount)
  redis.call('HINCRBY', acct, 'disputes', -1)
  push(amount)
  return { 'applied', amount }
end
