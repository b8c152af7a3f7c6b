-- Config for one account: the trial credit once ever, each credit once by id. Safe to run any number of times,
-- from any number of processes.
-- KEYS: acct credits
-- ARGV: trialNano ...creditPairs   (then id, amountNano for each credit)
if redis.call('HSETNX', KEYS[1], 'trial', ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'credited', ARGV[1])
end
for i = 2, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'credited', ARGV[i + 1])
  end
end
return redis.call('HGET', KEYS[1], 'credited')
