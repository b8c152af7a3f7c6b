-- Leased admission (gateway/state/leases.ts), one atomic step per key and flush: settles the calls a process admitted
-- from its lease, releases a lease (its calls still running become ordinary holds, settled later by settle.lua),
-- grants a new one, or asks every process to give its leases back. A lease is kept in the same structures admit.lua
-- reads, so the per-call path counts it: `slots` members in the key's window (scored at the lease's end, so each
-- stays at least 60 s past any call admitted from it), its token reservation on the first member, and its money as
-- one hold (budget and balance) released at its deadline if the process dies.
-- KEYS: acct revoked holds holdrec held spend settled usage leases calls tpmn keyexp   (all in the account's hash slot)
-- ARGV: now settledKeepMs streamMaxLen batchJson ...events
-- batchJson: { k = key, s = settles, r = release, g = grant, d = ms to ask leases back for, ds = 'key' | 'account',
--   h = key hash (a flush asks whether it was revoked) }; amounts are decimal strings:
--   s[i] = { id, lease, key, month, cost, fee, tokens, res, hold, at, free, hit, saved }
-- events[i]: the usage event (JSON) of s[i], passed as is (not inside batchJson: no second escaping and decoding).
-- The usage events of the settles not seen before go to the stream in one entry: format 1 (`v` 1, `event`) for one,
-- format 2 (`v` 2, `events`: a JSON array, in settle order) for several (gateway/usage/event-schema.ts reads both).
--   r    = { lease, key, month, deadline, inflight = { { id, at, tokens, res, hold } } }
--   g    = { lease, hash, key, month, life, deadline, rpm, tpm, budget, tokens, hold, max, revoked }
-- Leases: HASH lease id -> "<key>|<month>|<slots left>|<deadline>", "_demand[|<key>]" -> time until which none is granted.
-- Returns { verdict ('lease' | 'no' | 'done'), slots, tokens, nano, demand (0|1), revoked (0|1), live leases (of the
-- key, or of the account when ds = 'account') }.
local acct, revoked, holds, holdrec, held, spend, settled, usage, leases, calls, tpmn, keyexp =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local now, keep, maxlen = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if not now or not keep or not maxlen then return redis.error_reply('svc: lease needs numeric now, settledKeepMs and streamMaxLen') end
local ok, b = pcall(cjson.decode, ARGV[4])
if not ok or type(b) ~= 'table' then return redis.error_reply('svc: lease batch is not JSON') end

-- Every amount checked before the first write.
local function amounts(t, names)
  local vals = {}
  for i = 1, #names do vals[i] = t[names[i]] end
  return check_amounts(names, vals)
end
for i, s in ipairs(b.s or {}) do
  local bad = amounts(s, { 'cost', 'fee', 'tokens', 'res', 'hold', 'saved' })
  if bad then return bad end
  if type(ARGV[4 + i]) ~= 'string' or string.sub(ARGV[4 + i], 1, 1) ~= '{' then
    return redis.error_reply('svc: lease settle ' .. i .. ' has no usage event')
  end
end
if b.r then
  for _, c in ipairs(b.r.inflight or {}) do
    local bad = amounts(c, { 'tokens', 'res', 'hold' })
    if bad then return bad end
  end
end
if b.g then
  local bad = amounts(b.g, { 'tokens', 'hold' })
  if bad then return bad end
end

-- Redis lost the account's money: nothing is settled, released or granted until it is rebuilt.
local refused = money_refusal(acct)
if refused then return refused end
reclaim(acct, holds, holdrec, held, now)
trim_tokens(calls, tpmn, now - WINDOW)

local function lease_get(id)
  local rec = redis.call('HGET', leases, id)
  if not rec then return nil end
  local k, m, left, ends = string.match(rec, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  if not k then return nil end
  return { key = k, month = m, left = tonumber(left), ends = tonumber(ends) }
end

local function lease_put(id, l)
  redis.call('HSET', leases, id, l.key .. '|' .. l.month .. '|' .. int_string(l.left) .. '|' .. int_string(l.ends))
end

-- One slot of the lease used up by a call (settled, or now an ordinary hold): the highest left goes, and the call's
-- reserved tokens leave the reservation on the first; the last slot takes what is left of the reservation with it.
local function take_slot(id, l, res)
  if l.left <= 0 then return end
  local first = id .. '#1'
  if res ~= '0' and redis.call('HEXISTS', tpmn, first) == 1 then
    add(tpmn, first, negate(res))
    add(tpmn, '_sum', negate(res))
  end
  local m = id .. '#' .. int_string(l.left)
  if l.left == 1 then
    local rest = redis.call('HGET', tpmn, m)
    if rest then
      add(tpmn, '_sum', int_string(-(tonumber(rest) or 0)))
      redis.call('HDEL', tpmn, m)
    end
  end
  redis.call('ZREM', calls, m)
  l.left = l.left - 1
end

-- A call's hold taken off the lease's money (budget and balance alike).
local function take_money(id, nano)
  local rec = redis.call('HGET', holdrec, id)
  if not rec then return end
  local k, m, h, t = parse_hold(rec)
  if not k or not is_amount(h) then return end
  local left = tonumber(h) - tonumber(nano)
  if left < 0 then
    nano = h
    left = 0
  end
  add(acct, 'held', negate(nano))
  add(held, m .. '|' .. k, negate(nano))
  redis.call('HSET', holdrec, id, k .. '|' .. m .. '|' .. int_string(left) .. '|' .. t)
end

local function window_add(id, at, tokens)
  redis.call('ZADD', calls, at, id)
  redis.call('HSET', tpmn, id, tokens)
  add(tpmn, '_sum', tokens)
  redis.call('PEXPIRE', calls, 2 * WINDOW)
  redis.call('PEXPIRE', tpmn, 2 * WINDOW)
end

-- Settles: as settle.lua, idempotent per call id; the call's slot, tokens and hold leave the lease.
local events = {}
for i, s in ipairs(b.s or {}) do
  if not redis.call('ZSCORE', settled, s.id) then
    redis.call('ZADD', settled, now, s.id)
    local l = lease_get(s.lease)
    if l then
      take_slot(s.lease, l, s.res)
      take_money(s.lease, s.hold)
      lease_put(s.lease, l)
    end
    local m = s.month
    add(acct, 'spent', s.cost)
    add(acct, 'fee', s.fee)
    add(spend, m, s.cost)
    add(spend, m .. '|' .. s.key, s.cost)
    add(spend, 'fee:' .. m, s.fee)
    if s.hit == 1 then
      add(spend, 'hits:' .. m, '1')
      add(spend, 'hits:' .. m .. '|' .. s.key, '1')
      add(spend, 'saved:' .. m, s.saved)
      add(spend, 'saved:' .. m .. '|' .. s.key, s.saved)
    end
    if s.free ~= 1 then window_add(s.id, s.at, s.tokens) end
    events[#events + 1] = ARGV[4 + i]
  end
end
if #events > 0 then
  local xadd = { 'XADD', usage }
  if maxlen > 0 then
    table.insert(xadd, 'MAXLEN')
    table.insert(xadd, '~')
    table.insert(xadd, maxlen)
  end
  table.insert(xadd, '*')
  if #events == 1 then
    table.insert(xadd, 'v')
    table.insert(xadd, '1')
    table.insert(xadd, 'event')
    table.insert(xadd, events[1])
  else
    table.insert(xadd, 'v')
    table.insert(xadd, '2')
    table.insert(xadd, 'events')
    table.insert(xadd, '[' .. table.concat(events, ',') .. ']')
  end
  redis.call(unpack(xadd))
end
if #(b.s or {}) > 0 then redis.call('ZREMRANGEBYSCORE', settled, '-inf', now - keep) end

-- Release: the calls still running become ordinary holds (their slot and tokens a window entry of their own), then
-- whatever the lease has left goes back.
if b.r then
  local r = b.r
  local l = lease_get(r.lease)
  for _, c in ipairs(r.inflight or {}) do
    if redis.call('HEXISTS', holdrec, c.id) == 0 and not redis.call('ZSCORE', settled, c.id) then
      if l then
        take_slot(r.lease, l, c.res)
        take_money(r.lease, c.hold)
      end
      window_add(c.id, c.at, c.tokens)
      add(held, r.month .. '|' .. r.key, c.hold)
      add(acct, 'held', c.hold)
      redis.call('ZADD', holds, r.deadline, c.id)
      redis.call('HSET', holdrec, c.id, r.key .. '|' .. r.month .. '|' .. c.hold .. '|' .. c.tokens)
    end
  end
  if l then
    for i = 1, l.left do
      local m = r.lease .. '#' .. int_string(i)
      if i == 1 then
        local rest = redis.call('HGET', tpmn, m)
        if rest then
          add(tpmn, '_sum', int_string(-(tonumber(rest) or 0)))
          redis.call('HDEL', tpmn, m)
        end
      end
      redis.call('ZREM', calls, m)
    end
    redis.call('HDEL', leases, r.lease)
  end
  local rec = redis.call('HGET', holdrec, r.lease)
  if rec then release(acct, holds, holdrec, held, r.lease, rec) end
end

-- Live leases of the account, and of this key; ended ones are forgotten (their hold was reclaimed above, their
-- slots leave the window on their own). A request for leases back covers one key (RPM, TPM, budget) or the account
-- (balance): `_demand|<key>` or `_demand`, each the time until which no lease it covers is granted.
local bk = b.k or ''
local function until_of(field) return tonumber(redis.call('HGET', leases, field) or '0') or 0 end
local demand = until_of('_demand')
if bk ~= '' then demand = math.max(demand, until_of('_demand|' .. bk)) end
local live_all, live_key = 0, 0
local all = redis.call('HGETALL', leases)
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 7) ~= '_demand' then
    local k, _, _, ends = string.match(all[i + 1], '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
    if not ends or tonumber(ends) <= now then
      redis.call('HDEL', leases, all[i])
    else
      live_all = live_all + 1
      if k == bk then live_key = live_key + 1 end
    end
  elseif tonumber(all[i + 1]) and tonumber(all[i + 1]) <= now then
    redis.call('HDEL', leases, all[i])
  end
end
local account_wide = b.ds == 'account'
if b.d and tonumber(b.d) and tonumber(b.d) > 0 then
  local until_ms = now + tonumber(b.d)
  redis.call('HSET', leases, account_wide and '_demand' or ('_demand|' .. bk), int_string(until_ms))
  if until_ms > demand then demand = until_ms end
end
local live = account_wide and live_all or live_key
local demanding = demand > now and 1 or 0
local hash = b.g and b.g.hash or (b.h or '')
local gone = (hash ~= '' and redis.call('SISMEMBER', revoked, hash) == 1) and 1 or 0

local function no() return { 'no', 0, 0, 0, demanding, gone, live } end
if not b.g then return { 'done', 0, 0, 0, demanding, gone, live } end

-- Grant: only far from every cap, a slice that shrinks with the headroom and with the leases others hold.
local g = b.g
if demanding == 1 or gone == 1 or g.revoked == 1 then return no() end
local expires = tonumber(redis.call('HGET', keyexp, g.hash) or '')
if expires then
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + g.life + 1000 >= expires then return no() end
end
local share = 4 * (live_key + 1)
local slots = g.max
if g.rpm >= 0 then slots = math.min(slots, math.floor((g.rpm - redis.call('ZCARD', calls)) / share)) end
if slots < 2 then return no() end
local call_tokens, call_hold = tonumber(g.tokens), tonumber(g.hold)
local tok = 0
if g.tpm >= 0 then
  tok = math.floor((g.tpm - tonumber(redis.call('HGET', tpmn, '_sum') or '0')) / share)
  if tok < 2 * call_tokens then return no() end
end
local mk = g.month .. '|' .. g.key
local a = redis.call('HMGET', acct, 'credited', 'spent', 'held')
local head = (tonumber(a[1]) or 0) - (tonumber(a[2]) or 0) - (tonumber(a[3]) or 0)
if g.budget >= 0 then
  local committed = tonumber(redis.call('HGET', spend, mk) or '0') + tonumber(redis.call('HGET', held, mk) or '0')
  head = math.min(head, g.budget - committed)
end
local nano = math.floor(head / share)
local cap = call_hold * 2 * slots
if cap < nano then nano = cap end
if nano < 2 * call_hold or nano < 0 then return no() end
local ends = now + g.life
for i = 1, slots do
  redis.call('ZADD', calls, ends, g.lease .. '#' .. int_string(i))
end
redis.call('HSET', tpmn, g.lease .. '#1', int_string(tok))
add(tpmn, '_sum', int_string(tok))
redis.call('PEXPIRE', calls, 2 * WINDOW)
redis.call('PEXPIRE', tpmn, 2 * WINDOW)
add(held, mk, int_string(nano))
add(acct, 'held', int_string(nano))
redis.call('ZADD', holds, g.deadline, g.lease)
redis.call('HSET', holdrec, g.lease, g.key .. '|' .. g.month .. '|' .. int_string(nano) .. '|0')
lease_put(g.lease, { key = g.key, month = g.month, left = slots, ends = g.deadline })
return { 'lease', slots, tok, int_string(nano), demanding, gone, live + 1 }
