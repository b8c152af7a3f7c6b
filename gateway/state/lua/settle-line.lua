-- One line of a batch: charge its cost to the hold's month, take the line's worst case off the batch's hold, append
-- its usage event. Idempotent per line id for the batch's whole life (the `lines` set lives until the hold is
-- released, and a day more): a line re-read after a restart is charged once. After Redis lost its data (the set gone
-- with it), a line the ledger recorded is in `settled` (the rebuild remembers the ids it counted): charged once too.
-- KEYS: acct holds holdrec held spend usage lines settled   (all in the account's hash slot)
-- ARGV: id lineId keyName month lineHoldNano costNano feeNano now eventJson streamMaxLen
local acct, holds, holdrec, held, spend, usage, lines, settled = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local id, line, key, month = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local cost, fee, now = ARGV[6], ARGV[7], tonumber(ARGV[8])

local bad = check_amounts({ 'lineHoldNano', 'costNano', 'feeNano' }, { ARGV[5], ARGV[6], ARGV[7] })
if bad then return bad end
if not now or not tonumber(ARGV[10]) then return redis.error_reply('svc: settle-line needs numeric now and streamMaxLen') end

local refused = money_refusal(acct)
if refused then return refused end

reclaim(acct, holds, holdrec, held, now)
if redis.call('ZSCORE', settled, line) then return 0 end
if redis.call('SADD', lines, line) == 0 then return 0 end
redis.call('PEXPIRE', lines, 40 * 86400000)

local rec = redis.call('HGET', holdrec, id)
if rec then
  local k, m, nano, tokens = parse_hold(rec)
  if k and is_amount(nano) then
    key, month = k, m
    local left = tonumber(nano)
    local cut = math.min(tonumber(ARGV[5]), left)
    local cuts = int_string(cut)
    add(acct, 'held', negate(cuts))
    add(held, month .. '|' .. key, negate(cuts))
    redis.call('HSET', holdrec, id, key .. '|' .. month .. '|' .. int_string(left - cut) .. '|' .. tokens)
  end
end

add(acct, 'spent', cost)
add(acct, 'fee', fee)
add(spend, month, cost)
add(spend, month .. '|' .. key, cost)
add(spend, 'fee:' .. month, fee)

if tonumber(ARGV[10]) > 0 then
  redis.call('XADD', usage, 'MAXLEN', '~', ARGV[10], '*', 'v', '1', 'event', ARGV[9])
else
  redis.call('XADD', usage, '*', 'v', '1', 'event', ARGV[9])
end
return 1
