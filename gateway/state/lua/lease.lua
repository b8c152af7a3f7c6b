-- Leased admission (gateway/state/leases.ts), one atomic step per key and flush: settles the calls a process admitted
-- from its lease, releases a lease (its calls still running become ordinary holds, settled later by settle.lua),
-- grants a new one, or asks every process to give its leases back. A lease is kept in the same structures admit.lua
-- reads, so the per-call path counts it: `slots` members in the key's window (scored at the lease's end, so each
-- stays at least 60 s past any call admitted from it), its token reservation on the first member, and its money as
-- one hold (budget and balance) released at its deadline if the process dies.
-- KEYS: acct revoked holds holdrec held spend settled usage leases calls tpmn keyexp leaseends   (the account's slot)
-- ARGV: now settledKeepMs streamMaxLen batchJson ...events
-- batchJson: { k = key, s = settles, r = release, g = grant, d = ms to ask leases back for, ds = 'key' | 'account',
--   h = key hash (a flush asks whether it was revoked) }; amounts are decimal strings:
--   s[i] = { id, lease, key, month, cost, fee, tokens, res, hold, at, free, hit, saved }
-- events[i]: the usage event (JSON) of s[i], passed as is (not inside batchJson: no second escaping and decoding).
-- The usage events of the settles not seen before go to the stream in one entry: format 1 (`v` 1, `event`) for one,
-- format 2 (`v` 2, `events`: a JSON array, in settle order) for several (gateway/usage/event-schema.ts reads both).
--   r    = { lease, key, month, deadline, inflight = { { id, at, tokens, res, hold } } }
--   g    = { lease, hash, key, month, life, deadline, rpm, tpm, budget, tokens, hold, max, revoked }
-- Leases: HASH lease id -> "<key>|<month>|<slots left>|<deadline>", "_demand[|<key>]" -> time until which none is granted,
--   "_n" and "_n|<key>" -> live leases of the account and of the key; leaseends: ZSET lease id -> deadline.
-- Returns { verdict ('lease' | 'no' | 'done'), slots, tokens, nano, demand (0|1), revoked (0|1), live leases (of the
-- key, or of the account when ds = 'account') }.
local acct, revoked, holds, holdrec, held, spend, settled, usage, leases, calls, tpmn, keyexp, leaseends =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
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

-- Live leases are counted as they are granted and forgotten (`_n`, `_n|<key>`), and indexed by deadline (leaseends),
-- so a script reads two counts and the leases just ended, never every lease of the account (hundreds of busy keys).
local function count_live(k, by)
  for _, f in ipairs({ '_n', '_n|' .. k }) do
    if redis.call('HINCRBY', leases, f, by) <= 0 then redis.call('HDEL', leases, f) end
  end
end

local function forget_lease(id)
  local rec = redis.call('HGET', leases, id)
  redis.call('HDEL', leases, id)
  if redis.call('ZREM', leaseends, id) == 1 and rec then
    local k = string.match(rec, '^([^|]*)|')
    if k then count_live(k, -1) end
  end
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

-- Sums of amounts over the batch's settles, written with one HINCRBY per field at the end (write_sums). Exact: a Lua
-- number holds every integer below 2^53, so an addend of more than 13 digits is written at once instead, and a sum
-- is written and restarted after 900 addends (900 x 10^13 < 2^53).
local sums, sum_order = {}, {}
local function acc(key, field, amount)
  if amount == '0' or amount == '' then return end
  if #amount > 13 then return add(key, field, amount) end
  local id = key .. '\0' .. field
  local e = sums[id]
  if not e then
    e = { key = key, field = field, n = 0, c = 0 }
    sums[id] = e
    sum_order[#sum_order + 1] = e
  end
  if e.c >= 900 then
    add(key, field, int_string(e.n))
    e.n, e.c = 0, 0
  end
  e.n = e.n + tonumber(amount)
  e.c = e.c + 1
end
local function write_sums()
  for _, e in ipairs(sum_order) do add(e.key, e.field, int_string(e.n)) end
end

-- Arguments of one multi-member command, sent in slices (unpack's bound).
local function in_slices(cmd, key, list, step)
  for i = 1, #list, step do redis.call(cmd, key, unpack(list, i, math.min(i + step - 1, #list))) end
end

-- The leases a batch's settles used, each read once and written once (write_lease): what take_slot and take_money
-- do call by call, summed. The highest slots left go, the calls' reserved tokens leave the reservation on the first
-- slot, and when the last slot goes the reservation goes whole; the holds leave the lease's money, never below 0.
local touched, touched_order = {}, {}
local function lease_of(id)
  local t = touched[id]
  if t == nil then
    local l = lease_get(id)
    t = l and { id = id, l = l, members = {}, res = 0, emptied = false, holds = {} } or false
    touched[id] = t
    if t then touched_order[#touched_order + 1] = t end
  end
  return t
end
local function use_slot(t, res, hold)
  local l = t.l
  t.holds[#t.holds + 1] = hold
  if l.left <= 0 then return end
  t.members[#t.members + 1] = t.id .. '#' .. int_string(l.left)
  t.res = t.res + tonumber(res)
  if l.left == 1 then t.emptied = true end
  l.left = l.left - 1
end
local function write_lease(t)
  local first = t.id .. '#1'
  if #t.members > 0 and redis.call('HEXISTS', tpmn, first) == 1 then
    if t.emptied then
      add(tpmn, '_sum', int_string(-(tonumber(redis.call('HGET', tpmn, first)) or 0)))
      redis.call('HDEL', tpmn, first)
    elseif t.res > 0 then
      add(tpmn, first, int_string(-t.res))
      add(tpmn, '_sum', int_string(-t.res))
    end
  end
  if #t.members > 0 then in_slices('ZREM', calls, t.members, SLICE) end
  local rec = redis.call('HGET', holdrec, t.id)
  local k, m, h, tk
  if rec then k, m, h, tk = parse_hold(rec) end
  if k and is_amount(h) then
    local sum, small = 0, #h <= 15 and #t.holds <= 900
    for _, x in ipairs(t.holds) do
      if #x > 13 then small = false end
      sum = sum + tonumber(x)
    end
    if small then
      local take = math.min(sum, tonumber(h))
      add(acct, 'held', negate(int_string(take)))
      add(held, m .. '|' .. k, negate(int_string(take)))
      redis.call('HSET', holdrec, t.id, k .. '|' .. m .. '|' .. int_string(tonumber(h) - take) .. '|' .. tk)
    else
      for _, x in ipairs(t.holds) do take_money(t.id, x) end
    end
  end
  lease_put(t.id, t.l)
end

-- Settles: as settle.lua, idempotent per call id (one seen twice in the batch counts once); the call's slot, tokens
-- and hold leave the lease.
local events = {}
local list = b.s or {}
local known = {}
for i = 1, #list, SLICE do
  local ids = {}
  for j = i, math.min(i + SLICE - 1, #list) do ids[#ids + 1] = list[j].id end
  local scores = redis.call('ZMSCORE', settled, unpack(ids))
  for j = 1, #ids do known[i + j - 1] = scores[j] and true or false end
end
local seen, new_settled, window, token_fields = {}, {}, {}, {}
for i, s in ipairs(list) do
  if not known[i] and not seen[s.id] then
    seen[s.id] = true
    new_settled[#new_settled + 1] = now
    new_settled[#new_settled + 1] = s.id
    local t = lease_of(s.lease)
    if t then use_slot(t, s.res, s.hold) end
    local m = s.month
    acc(acct, 'spent', s.cost)
    acc(acct, 'fee', s.fee)
    acc(spend, m, s.cost)
    acc(spend, m .. '|' .. s.key, s.cost)
    acc(spend, 'fee:' .. m, s.fee)
    if s.hit == 1 then
      acc(spend, 'hits:' .. m, '1')
      acc(spend, 'hits:' .. m .. '|' .. s.key, '1')
      acc(spend, 'saved:' .. m, s.saved)
      acc(spend, 'saved:' .. m .. '|' .. s.key, s.saved)
    end
    if s.free ~= 1 then
      window[#window + 1] = s.at
      window[#window + 1] = s.id
      token_fields[#token_fields + 1] = s.id
      token_fields[#token_fields + 1] = s.tokens
      acc(tpmn, '_sum', s.tokens)
    end
    events[#events + 1] = ARGV[4 + i]
  end
end
if #new_settled > 0 then in_slices('ZADD', settled, new_settled, 2 * SLICE) end
for _, t in ipairs(touched_order) do write_lease(t) end
write_sums()
if #window > 0 then
  in_slices('ZADD', calls, window, 2 * SLICE)
  in_slices('HSET', tpmn, token_fields, 2 * SLICE)
  redis.call('PEXPIRE', calls, 2 * WINDOW)
  redis.call('PEXPIRE', tpmn, 2 * WINDOW)
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
if #(b.s or {}) > 0 then forget_settled(settled, now - keep) end

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
    forget_lease(r.lease)
  end
  local rec = redis.call('HGET', holdrec, r.lease)
  if rec then release(acct, holds, holdrec, held, r.lease, rec) end
end

-- Live leases of the account, and of this key; ended ones are forgotten (their hold was reclaimed above, their
-- slots leave the window on their own). A request for leases back covers one key (RPM, TPM, budget) or the account
-- (balance): `_demand|<key>` or `_demand`, each the time until which no lease it covers is granted.
local bk = b.k or ''
local function until_of(field)
  local v = tonumber(redis.call('HGET', leases, field) or '')
  if v and v <= now then
    redis.call('HDEL', leases, field)
    return 0
  end
  return v or 0
end
local demand = until_of('_demand')
if bk ~= '' then demand = math.max(demand, until_of('_demand|' .. bk)) end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', leaseends, '-inf', now, 'LIMIT', 0, 1000)) do forget_lease(id) end
local function live_of(field) return tonumber(redis.call('HGET', leases, field) or '0') or 0 end
local live_all = live_of('_n')
local live_key = bk ~= '' and live_of('_n|' .. bk) or 0
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
redis.call('ZADD', leaseends, g.deadline, g.lease)
count_live(g.key, 1)
return { 'lease', slots, tok, int_string(nano), demanding, gone, live + 1 }
