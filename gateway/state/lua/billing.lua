-- One Stripe event applied to one account's money, exactly once, in one atomic step (prepended with lib.lua).
-- KEYS: acct stripe entries   (all in the account's slot {a:<account>})
-- ARGV: op eventId objectId paymentIntent amountNano entryJson status
--   op credit       credit amount once per object (a paid Checkout Session cs_…); its payment intent's amount noted
--      record       note the object once (a failed or unpaid session), no money
--      refund       refund re_… of amount on paymentIntent seen in `status` (pending, requires_action, succeeded,
--                   failed, canceled)
--      dispute      debit amount once per dispute, open disputes + 1
--      reinstate    credit amount back once per dispute, open disputes - 1
-- Refunds: a refund's status only moves forward, pending/requires_action (0) -> succeeded (1) -> failed/canceled (2)
-- (a succeeded refund can still fail), so each refund keeps the highest rank seen ("rs:<object>" = "<rank>|<amount>",
-- its amount as first seen) and an older or repeated status changes nothing: any order, any repeats, same result.
-- A payment's refunds debit min(its amount, sum of its refunds now succeeded) in all ("rsum:<pi>", "rdeb:<pi>",
-- "pa:<pi>"): a refund that succeeds debits, one that fails or is canceled after succeeding credits back what that
-- took, each transition once, never more than the payment in all.
-- Each event id counts once (HSETNX ev:<id>); each other object once (HSETNX obj:<id>). Entries: "<deltaNano>|<json>".
-- Returns {verdict, deltaNano}: verdict applied | duplicate-event | duplicate-object | nothing.
local acct, st, entries = KEYS[1], KEYS[2], KEYS[3]
local op, ev, obj, pi, amount, entry, status = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local OPS = { credit = true, record = true, refund = true, dispute = true, reinstate = true }
local RANK = { pending = 0, requires_action = 0, succeeded = 1, failed = 2, canceled = 2 }
-- Every input checked before the first write.
if not OPS[op] then return redis.error_reply('svc: unknown billing op ' .. tostring(op)) end
if type(ev) ~= 'string' or ev == '' or type(obj) ~= 'string' or obj == '' then
  return redis.error_reply('svc: billing event and object ids are required')
end
if type(pi) ~= 'string' then return redis.error_reply('svc: payment intent must be a string') end
if op == 'refund' and pi == '' then return redis.error_reply('svc: a refund needs its payment intent') end
if op == 'refund' and RANK[status] == nil then return redis.error_reply('svc: unknown refund status ' .. tostring(status)) end
if not is_amount(amount) or #amount > 15 then return redis.error_reply('svc: amountNano is not an integer below 1e15: ' .. tostring(amount)) end
if type(entry) ~= 'string' then return redis.error_reply('svc: entry must be a string') end

if redis.call('HSETNX', st, 'ev:' .. ev, op .. '|' .. obj) == 0 then return { 'duplicate-event', '0' } end

local function push(delta)
  redis.call('RPUSH', entries, delta .. '|' .. entry)
end

if op == 'refund' then
  local prev = redis.call('HGET', st, 'rs:' .. obj)
  -- A refund debited by the rules before refund statuses (obj:<id> without rs:<id>) stays as it was.
  if not prev and redis.call('HEXISTS', st, 'obj:' .. obj) == 1 then return { 'nothing', '0' } end
  local r0, a = -1, tonumber(amount)
  if prev then
    local pr, pa = string.match(prev, '^(%d+)|(%d+)$')
    r0, a = tonumber(pr), tonumber(pa)
  end
  local r1 = RANK[status]
  if r1 <= r0 then return { 'nothing', '0' } end
  redis.call('HSET', st, 'rs:' .. obj, r1 .. '|' .. int_string(a))
  local s0 = tonumber(redis.call('HGET', st, 'rsum:' .. pi) or '0')
  local s1 = s0
  if r1 == 1 then s1 = s0 + a elseif r0 == 1 then s1 = s0 - a end
  if s1 == s0 then return { 'nothing', '0' } end
  redis.call('HSET', st, 'rsum:' .. pi, int_string(s1))
  local paid = redis.call('HGET', st, 'pa:' .. pi)
  local d1 = s1
  if paid and d1 > tonumber(paid) then d1 = tonumber(paid) end
  local d0 = tonumber(redis.call('HGET', st, 'rdeb:' .. pi) or '0')
  redis.call('HSET', st, 'rdeb:' .. pi, int_string(d1))
  local delta = int_string(d0 - d1)
  if delta == '0' then return { 'nothing', '0' } end
  add(acct, 'credited', delta)
  push(delta)
  return { 'applied', delta }
end

if redis.call('HSETNX', st, 'obj:' .. obj, ev) == 0 then return { 'duplicate-object', '0' } end
if op == 'credit' then
  if pi ~= '' then redis.call('HSETNX', st, 'pa:' .. pi, amount) end
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
