// node test/bench/money-check.ts [--rounds N]: what the money scripts' check of the account's state costs inside
// Redis (gateway/state/lua/lib.lua money_refusal), on a throwaway Redis Cluster: the check before (one HEXISTS of
// `trial`), the check now on an account never checked against the ledger (one HMGET of `trial` and `node`: one Redis,
// or no DATABASE_URL), and on one checked on its node (the HMGET and CLUSTER MYID). Each timed 20,000 times in one
// script with the server's clock, so neither the network nor the client counts; the median of the rounds is printed.
import { parseArgs } from 'node:util';
import { startRedisCluster } from '../helpers/redis-cluster.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '15' } } });
const LOOP = `
local function t() local x = redis.call('TIME') return tonumber(x[1]) * 1e6 + tonumber(x[2]) end
local n = tonumber(ARGV[1])
local a = t()
for i = 1, n do if redis.call('HEXISTS', KEYS[1], 'trial') == 0 then return 'x' end end
local b = t()
for i = 1, n do
  local m = redis.call('HMGET', KEYS[2], 'trial', 'node')
  if not m[1] then return 'x' end
  if m[2] and m[2] ~= redis.call('CLUSTER', 'MYID') then return 'y' end
end
local c = t()
for i = 1, n do
  local m = redis.call('HMGET', KEYS[1], 'trial', 'node')
  if not m[1] then return 'x' end
  if m[2] and m[2] ~= redis.call('CLUSTER', 'MYID') then return 'y' end
end
local d = t()
return { tostring((b - a) / n), tostring((d - c) / n), tostring((c - b) / n) }`;

const cluster = await startRedisCluster('money-check');
try {
  const plain = `${cluster.prefix}:{a:bench}:acct`;
  const checked = `${cluster.prefix}:{a:bench}:acct2`;
  const redis = cluster.client;
  await redis.hset(plain, 'trial', '1000000000', 'credited', '1000000000');
  await redis.hset(checked, 'trial', '1000000000', 'credited', '1000000000');
  await redis.eval("return redis.call('HSET', KEYS[1], 'node', redis.call('CLUSTER', 'MYID'))", 1, checked);
  const rows: number[][] = [];
  for (let i = 0; i < Number(values.rounds); i++) rows.push(((await redis.eval(LOOP, 2, plain, checked, 20_000)) as string[]).map(Number));
  const median = (j: number): string => (rows.map((r) => r[j] as number).sort((x, y) => x - y)[Math.floor(rows.length / 2)] as number).toFixed(2);
  console.log(
    `per check, median of ${rows.length} rounds of 20,000: HEXISTS trial (before) ${median(0)} µs; HMGET trial node ${median(1)} µs; HMGET and CLUSTER MYID (checked on its node) ${median(2)} µs`,
  );
} finally {
  await cluster.stop();
}
