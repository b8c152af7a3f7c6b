-- Response cache read: the entry of one request key, or nil when there is none or it is past its expiry (an
-- expired entry stays until the next put removes it). Read-only.
-- KEYS: entries index   (both in the account's hash slot)
-- ARGV: sha now
local entries, index = KEYS[1], KEYS[2]
local sha, now = ARGV[1], tonumber(ARGV[2])
if not now then return redis.error_reply('svc: cache-get needs a numeric now') end
local expires = tonumber(redis.call('ZSCORE', index, sha) or '')
if not expires or expires <= now then return false end
return redis.call('HGET', entries, sha)
