-- The MCP sessions idle since before `oldest`, at most `max`, claimed: removed with their records, the records
-- returned. One replica claims each session (the sweep ends its upstream sessions).
-- KEYS: idle records   (one hash slot: {mcp})
-- ARGV: oldest max
local idle, records = KEYS[1], KEYS[2]
local ids = redis.call('ZRANGEBYSCORE', idle, '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, id in ipairs(ids) do
  redis.call('ZREM', idle, id)
  local rec = redis.call('HGET', records, id)
  redis.call('HDEL', records, id)
  if rec then out[#out + 1] = rec end
end
return out
