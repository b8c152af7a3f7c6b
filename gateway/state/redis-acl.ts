// Least-privilege Redis ACL rules for each process (docs/operations.md "Redis Cluster, TLS and ACL users"; tested by test/redis-security/tls-acl.test.ts
// on a real redis-server). Each process gets only the commands it sends, scripts' own commands included (Redis checks
// the commands a Lua script calls against the caller's ACL), and only its keys; none gets FLUSHALL, CONFIG, KEYS,
// SCAN, DEBUG, SHUTDOWN or any @admin / @dangerous command.
//
// Keys (<p> = SVC_REDIS_PREFIX, default "svc"): see gateway/state/redis-store.ts and gateway/contract/config-channel.ts.

/** Every client: the ready check (INFO), PING, and a Cluster's slot map. AUTH and HELLO are always allowed. */
const CONNECTION = ['+ping', '+info', '+cluster|slots', '+cluster|info', '+cluster|nodes'];

/** Commands the Lua scripts of gateway/state/lua/ call for admit, settle, view and ledger. */
const SCRIPTED_CALLS = [
  '+hexists',
  '+sismember',
  '+zrangebyscore',
  '+hget',
  '+hmget',
  '+hincrby',
  '+hdel',
  '+hset',
  '+zrem',
  '+zcard',
  '+zrange',
  '+zadd',
  '+pexpire',
  '+zscore',
  // A leased flush checks its settles in one command (lease.lua).
  '+zmscore',
  '+zremrangebyscore',
  // Settled ids forgotten a slice at a time (lib.lua forget_settled).
  '+zcount',
  '+zremrangebyrank',
  '+xadd',
  '+time',
  // On a Redis Cluster: the node's id, against the one that last checked the account with the ledger (lib.lua).
  '+cluster|myid',
];

export type RedisRole = 'gateway' | 'operator' | 'exporter';

/** The ACL rule list for one process (to follow `user <name> on >password` or to give to ACL SETUSER). */
export function aclRules(role: RedisRole, prefix = 'svc'): string {
  const p = prefix;
  const byRole: Record<RedisRole, string[]> = {
    // Cluster-mode gateway: reads config and key records (read-only), admits/settles on account keys, appends usage,
    // listens for config announcements, records "last used", counts live traffic per target and reads target states
    // (gateway/availability/board.ts), keeps MCP sessions' last use (gateway/state/mcp-sessions.ts).
    gateway: [
      `%R~${p}:config:*`,
      `%R~${p}:key:*`,
      `%R~${p}:money:generation`,
      // A Cluster shard that lost its data: each slot's marker (gateway/state/slot-markers.ts).
      `%R~${p}:money:slot:*`,
      `~${p}:{a:*}:*`,
      `~${p}:lastused`,
      `~${p}:{avail}:*`,
      `~${p}:{mcp}:*`,
      `&${p}:config:changed`,
      '+evalsha',
      '+eval',
      '+evalsha_ro',
      '+eval_ro',
      '+get',
      '+hmget',
      '+hget',
      '+hset',
      '+hgetall',
      '+expire',
      '+xadd',
      '+subscribe',
      '+unsubscribe',
      ...SCRIPTED_CALLS,
    ],
    // Operator (and the standalone gateway's publish): config snapshots and announcements, key records and their
    // registry, the streams' registry, credits, revocations and key expiries of each account; the prober's target states;
    // this month's spend for the spend refresh of status and for a rebuild.
    operator: [
      `~${p}:config:*`,
      `~${p}:key:*`,
      `~${p}:keys`,
      `~${p}:usage:streams`,
      `~${p}:{a:*}:acct`,
      `~${p}:{a:*}:credits`,
      `~${p}:{a:*}:revoked`,
      `~${p}:{a:*}:keyexp`,
      // A Redis that lost its data: the marker, the rebuild's lock, and what a rebuild writes back (money-restore.ts).
      `~${p}:money:*`,
      `~${p}:{a:*}:spend`,
      `~${p}:{a:*}:stripe`,
      `~${p}:{a:*}:billing`,
      // The ids a rebuild stages before its restore renames them into the settled set (stage-settled.lua).
      `~${p}:{a:*}:settled:stage:*`,
      // A promoted replica's accounts caught up with the ledger (catch-up.lua): the settles it missed, their holds.
      `~${p}:{a:*}:settled`,
      `~${p}:{a:*}:holds`,
      `~${p}:{a:*}:holdrec`,
      `~${p}:{a:*}:held`,
      `~${p}:{avail}:*`,
      `&${p}:config:changed`,
      '+get',
      '+set',
      '+del',
      '+lrem',
      '+lpush',
      '+lrange',
      '+ltrim',
      '+multi',
      '+exec',
      '+publish',
      '+sadd',
      '+smembers',
      '+srem',
      '+hget',
      '+hmget',
      '+hset',
      '+hdel',
      '+hgetall',
      '+hsetnx',
      '+hincrby',
      '+hexists',
      '+zscore',
      '+zadd',
      '+zrem',
      '+exists',
      '+rename',
      '+persist',
      '+zunionstore',
      '+pexpire',
      '+cluster|myid',
      '+evalsha',
      '+eval',
    ],
    // Usage exporter: the streams through its consumer group, and (read-only) what credit sync needs.
    exporter: [
      `%R~${p}:config:snapshot`,
      `%R~${p}:usage:streams`,
      `~${p}:{a:*}:usage`,
      // Money read-only: the reconciliation's reads. Events it commits after a rebuild had read the ledger are queued in
      // Postgres and settled by the operator (late-sweep.ts), never by the exporter.
      `%R~${p}:{a:*}:acct`,
      `%R~${p}:{a:*}:credits`,
      `%R~${p}:{a:*}:billing`,
      // What the reconciliation found, for the operator's Events (one SET with an expiry).
      `~${p}:money:drift`,
      '+get',
      '+set',
      '+smembers',
      '+hget',
      // The reconciliation: one consistent read of an account's money and stream; the billing entries it copies.
      '+hmget',
      '+multi',
      '+exec',
      '+lrange',
      '+xgroup|create',
      '+xgroup|delconsumer',
      '+xreadgroup',
      '+xautoclaim',
      '+xpending',
      '+xack',
      '+xinfo|groups',
      '+xinfo|consumers',
      '+xrange',
      '+xtrim',
    ],
  };
  return [...new Set(['resetkeys', 'resetchannels', '-@all', ...CONNECTION, ...byRole[role]])].join(' ');
}

/** A whole ACL file line. */
export function aclUser(name: string, password: string, role: RedisRole, prefix = 'svc'): string {
  return `user ${name} on >${password} ${aclRules(role, prefix)}`;
}
