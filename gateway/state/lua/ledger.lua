-- The account's ledger totals in one consistent read.
-- KEYS: acct holds
-- ARGV:
-- Returns {credited, spent, fee, held, open holds}.
local a = redis.call('HMGET', KEYS[1], 'credited', 'spent', 'fee', 'held')
return { a[1] or '0', a[2] or '0', a[3] or '0', a[4] or '0', redis.call('ZCARD', KEYS[2]) }
