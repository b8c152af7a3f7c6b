-- Restores one account's money from the Postgres ledger into a Redis that lost it (gateway/state/money-restore.ts),
-- in one atomic step. Does nothing when the account's money is there (its record holds `trial` or `restored`): a
-- restore never overwrites live state, so any number of processes may run it, any number of times.
-- KEYS: acct credits spend stripe billing settled stage   (all in the account's slot {a:<account>})
-- ARGV: recordJson
-- recordJson (every amount a decimal string, nano-USD): trial (absent: never granted), credited (every ledger credit:
-- trial, config credits, payments, refunds, disputes, SLA credits), spent, fee, disputes (open), credits (config
-- credit ids applied), spend (fields of the spend hash: this month's per account, per key, fee, hits, saved),
-- stripe (one [eventId, amountNano, field, value, ...] per applied Stripe step: ev:<id> and the object it moved money
-- for), billing (the billing page's entries, "<deltaNano>|<json>", oldest first).
-- stage: the ids of the usage events the ledger recorded lately (staged by stage-settled.lua, each scored by the time
-- it is remembered from): they become the account's settled set, so a settle Redis applied just before the loss,
-- whose answer was lost and which its gateway retries now, charges nothing a second time.
-- A Stripe event applied again since the loss (a webhook resent before the rebuild) is in Redis already: its amount
-- is not added a second time.
-- Returns 1 when restored, 0 when the account's money was live.
local acct, credits, spend, stripe, billing, settled, stage = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
if redis.call('HEXISTS', acct, 'trial') == 1 or redis.call('HEXISTS', acct, 'restored') == 1 then
  redis.call('DEL', stage)
  return 0
end
local ok, r = pcall(cjson.decode, ARGV[1])
if not ok or type(r) ~= 'table' then return redis.error_reply('svc: restore needs a JSON record') end
-- `credited` may be below 0 (refunds and disputes after the credits were spent); spent and fee may not.
local bad = check_amounts({ 'credited', 'spent', 'fee' }, { string.gsub(tostring(r.credited), '^-', '', 1), r.spent, r.fee })
if bad then return bad end
for _, s in ipairs(r.stripe or {}) do
  if not is_amount(string.gsub(s[2], '^-', '', 1)) then return redis.error_reply('svc: stripe amount ' .. tostring(s[2])) end
end

-- Stripe steps first: those a resent webhook applied again since the loss are already counted in `credited` (a
-- record without `credited`, evicted with the rest of it while the Stripe hash stayed, has counted none of them).
local counted = redis.call('HEXISTS', acct, 'credited') == 1
local again = 0
for _, s in ipairs(r.stripe or {}) do
  if redis.call('HSETNX', stripe, 'ev:' .. s[1], 'restored') == 0 and counted then again = again + tonumber(s[2]) end
  for i = 3, #s, 2 do redis.call('HSET', stripe, s[i], s[i + 1]) end
end
add(acct, 'credited', int_string(tonumber(r.credited) - again))
add(acct, 'spent', r.spent)
add(acct, 'fee', r.fee)
if r.disputes and r.disputes ~= '0' then redis.call('HINCRBY', acct, 'disputes', r.disputes) end
for i = 1, #(r.credits or {}), SLICE do
  redis.call('SADD', credits, unpack(r.credits, i, math.min(i + SLICE - 1, #r.credits)))
end
for field, v in pairs(r.spend or {}) do add(spend, field, v) end
-- The staged ids, in one step whatever their number: a rename (nothing is settled while the money is lost, so the
-- set is normally absent), else a union keeping each id's later time.
if redis.call('EXISTS', stage) == 1 then
  if redis.call('EXISTS', settled) == 0 then
    redis.call('RENAME', stage, settled)
    redis.call('PERSIST', settled)
  else
    redis.call('ZUNIONSTORE', settled, 2, settled, stage, 'AGGREGATE', 'MAX')
    redis.call('DEL', stage)
  end
end
local entries = r.billing or {}
for i = #entries, 1, -1 do redis.call('LPUSH', billing, entries[i]) end
redis.call('HSET', acct, 'restored', '1')
-- On a Redis Cluster: checked against the ledger on this node (lib.lua money_refusal).
local me = redis.pcall('CLUSTER', 'MYID')
if type(me) == 'string' then redis.call('HSET', acct, 'node', me) end
-- Last: `trial` is what admission checks; without it (never granted) the next publish grants it once.
if type(r.trial) == 'string' then redis.call('HSET', acct, 'trial', r.trial) end
return 1
