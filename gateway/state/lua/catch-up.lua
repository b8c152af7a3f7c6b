-- Checks one account's money on this Redis Cluster node against the Postgres ledger, in one atomic step
-- (gateway/state/money-catch-up.ts). The account's record names the node it was last checked on (`node`, lib.lua):
-- another node serving it is a replica promoted since, whose copy may lack the last settles the lost master applied
-- (asynchronous replication) while the exporter had already copied them to the ledger.
-- KEYS: acct holds holdrec held spend settled   (all in the account's slot {a:<account>})
-- ARGV: eventsJson arm (arm: "1", "0" or "late", below)
-- eventsJson: the ledger's recent usage events of the account (every one whose settle this node would still remember:
-- created within the settled set's memory), each [eventId, month, keyName, costNano, feeNano, cacheHit, savedNano,
-- createdAtMs]; "" when not read yet.
-- arm "1": an account never checked (no `node`) is marked as checked here, without events (nothing to compare yet).
-- Each event this node never settled is settled now as settle.lua would (spend, fee, month and key fields, cache hits,
-- its hold released, its id remembered so a retried settle of it is a no-op); the others are left alone: any number of
-- processes may run it, any number of times.
-- Returns {verdict, events applied, nano applied}: verdict lost (no money state: restore-account.lua's job), single
-- (not a Cluster), checked (already checked on this node), armed, stale (needs the events), caught-up.
local acct, holds, holdrec, held, spend, settled = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
if redis.call('HEXISTS', acct, 'trial') == 0 then return { 'lost', 0, '0' } end
-- arm "late": events the exporter committed to the ledger after a rebuild had read it (the batch was read from the
-- Redis that lost its data): settled here unless already settled (the rebuild remembers the ids it counted, a
-- gateway's retried settle marks its own), on any Redis, the node checks left alone.
local late = ARGV[2] == 'late'
local me = redis.pcall('CLUSTER', 'MYID')
if not late then
  if type(me) ~= 'string' then return { 'single', 0, '0' } end
  local node = redis.call('HGET', acct, 'node')
  if node == me then return { 'checked', 0, '0' } end
  if not node and ARGV[2] == '1' then
    redis.call('HSET', acct, 'node', me)
    return { 'armed', 0, '0' }
  end
end
if ARGV[1] == '' then return { 'stale', 0, '0' } end
local ok, events = pcall(cjson.decode, ARGV[1])
if not ok or type(events) ~= 'table' then return redis.error_reply('svc: catch-up needs a JSON list of events') end
for _, e in ipairs(events) do
  if type(e) ~= 'table' or type(e[1]) ~= 'string' or type(e[2]) ~= 'string' or type(e[3]) ~= 'string' or not tonumber(e[8]) then
    return redis.error_reply('svc: catch-up event malformed')
  end
  local bad = check_amounts({ 'costNano', 'feeNano', 'savedNano' }, { e[4], e[5], e[7] })
  if bad then return bad end
end

local n, nano = 0, 0
for _, e in ipairs(events) do
  local id, month, key, cost, fee = e[1], e[2], e[3], e[4], e[5]
  if not redis.call('ZSCORE', settled, id) then
    redis.call('ZADD', settled, tonumber(e[8]), id)
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
    if e[6] == '1' then
      add(spend, 'hits:' .. month, '1')
      add(spend, 'hits:' .. month .. '|' .. key, '1')
      add(spend, 'saved:' .. month, e[7])
      add(spend, 'saved:' .. month .. '|' .. key, e[7])
    end
    n = n + 1
    nano = nano + tonumber(cost)
  end
end
if not late then redis.call('HSET', acct, 'node', me) end
return { 'caught-up', n, int_string(nano) }
