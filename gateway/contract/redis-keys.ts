// Every Redis key name, in one place: the layout the operator, the gateways, the exporter and the console share.
// Pure names (no client). <p> is the prefix (default "svc"). Keys of one account carry the hash tag {a:<account>},
// the availability keys {avail}: a Lua script touches one hash slot, so Redis Cluster runs it.
//
//   <p>:config:snapshots:<v>     STRING  one compiled snapshot, content-addressed (config-channel.ts)
//   <p>:config:current           STRING  the version gateways serve
//   <p>:config:history           LIST    versions published, newest first
//   <p>:config:changed           channel the new version, announced after `current` moves
//   <p>:config:snapshot          STRING  the last snapshot applied by a store (the exporter's credit sync reads it)
//   <p>:key:<hmac>               HASH    record (KeyRecord JSON), revoked ("0"|"1", only ever set to "1")
//   <p>:keys                     SET     HMACs published, so keys gone from config can be removed (revoked ones stay)
//   <p>:lastused                 HASH    "<account>|<key>" -> time of the key's latest call (ms, at most once a minute)
//   <p>:usage:streams            SET     names of every account's usage stream (for the exporter)
//   <p>:money:generation         STRING  a random id, written once the money state is complete (published, or rebuilt
//                                        from Postgres); gone = this Redis lost its data (gateway/state/money-guard.ts)
//   <p>:money:slot:{<tag>}       STRING  the generation again, one per Redis Cluster hash slot (the tag picks it): gone =
//                                        the slot's shard lost its data (gateway/state/slot-markers.ts)
//   <p>:money:rebuild-lock       STRING  the process rebuilding money from Postgres (SET NX PX), so only one does
//   <p>:{a:<a>}:acct             HASH    credited, spent, fee, held (nano-USD), trial (granted once: its amount; absent:
//                                        the account's money is not in Redis, money scripts refuse), restored ("1": rebuilt),
//                                        node (Redis Cluster with a ledger: the master it was last checked on against
//                                        the ledger; another node serving it refuses until caught up, catch-up.lua)
//   <p>:{a:<a>}:credits          SET     credit ids applied (each exactly once)
//   <p>:{a:<a>}:revoked          SET     revoked key HMACs (checked inside admit; never removed)
//   <p>:{a:<a>}:keyexp           HASH    key HMAC -> expiry (ms), checked inside admit against the server's TIME
//   <p>:{a:<a>}:holds            ZSET    open hold id -> deadline (ms); past it, admit/settle release the hold
//   <p>:{a:<a>}:holdrec          HASH    hold id -> "<k>|<month>|<holdNano>|<tokens>"
//   <p>:{a:<a>}:held             HASH    "<month>|<k>" -> nano held by the key's open holds of that month
//   <p>:{a:<a>}:spend            HASH    "<month>" -> account spend, "<month>|<k>" -> key spend, "fee:<month>" -> fee
//   <p>:{a:<a>}:settled          ZSET    settled hold id -> time: a retried settle is a no-op
//   <p>:{a:<a>}:settled:stage:<t> ZSET   a rebuild's settled ids, staged in slices, renamed to settled by its restore
//   <p>:{a:<a>}:leases           HASH    admission leases (SVC_ADMISSION_LEASES): lease id -> "<k>|<month>|<slots left>|
//                                        <deadline>", _demand -> time until which none is granted, _n and _n|<k> ->
//                                        live leases of the account and of the key (state/lua/lease.lua)
//   <p>:{a:<a>}:leaseends        ZSET    admission leases: lease id -> deadline (an ended one is forgotten there)
//   <p>:{a:<a>}:tpm:<k>          ZSET    the key's calls: call id -> admission time (last 60 s); its size is the RPM count
//   <p>:{a:<a>}:tpmn:<k>         HASH    call id -> tokens (reserved, then actual after settle), _sum -> window total
//   <p>:{a:<a>}:usage            STREAM  usage events
//   <p>:{a:<a>}:stripe           HASH    payments: event and object ids applied, refunds per payment (billing.lua)
//   <p>:{a:<a>}:billing          LIST    ledger entries of payments, refunds, disputes (JSON)
//   <p>:{a:<a>}:cache           HASH    response cache: sha256 of the request's canonical form -> entry JSON (pipeline/cache.ts)
//   <p>:{a:<a>}:cachex          ZSET    response cache: sha256 -> expiry (ms); an entry past it is a miss, removed by the next put
//   <p>:{a:<a>}:cachesz         HASH    response cache: sha256 -> entry bytes, _sum -> the account's cached bytes (its budget)
//   <p>:{avail}:...              availability: target states, live outcomes per minute, uptime segments, incidents
//   <p>:console:session:<hash>   STRING  a console session (the id's hash), with its TTL
//   <p>:console:signin:<addr>    STRING  failed sign-ins of one client address, with its TTL

export interface AccountKeys {
  acct: string;
  credits: string;
  revoked: string;
  keyexp: string;
  holds: string;
  holdrec: string;
  held: string;
  spend: string;
  settled: string;
  /** Admission leases held by gateway processes (gateway/state/leases.ts). */
  leases: string;
  /** The same leases by deadline. */
  leaseEnds: string;
  usage: string;
  stripe: string;
  billing: string;
  /** The response cache's entries, expiries and sizes (state/response-cache.ts). */
  cache: string;
  cachex: string;
  cachesz: string;
}

export interface RedisKeys {
  readonly prefix: string;
  configCurrent: string;
  configHistory: string;
  configChannel: string;
  configSnapshot: (version: string) => string;
  /** The last snapshot a store applied (one copy, read by the exporter's credit sync). */
  appliedSnapshot: string;
  key: (hmac: string) => string;
  keys: string;
  lastUsed: string;
  usageStreams: string;
  moneyGeneration: string;
  moneyRebuildLock: string;
  /** What the exporter's last reconciliation found (gateway/contract/money-drift.ts), for the operator's Events. */
  moneyDrift: string;
  /** One slot's marker, named by a hash tag that lands in that slot (gateway/state/slot-markers.ts). */
  moneySlot: (tag: string) => string;
  account: (account: string) => AccountKeys;
  /** The lines of a batch charged against its hold (settle-line.lua), in the account's slot. */
  batchLines: (account: string, holdId: string) => string;
  /** Batch and file records of an account (gateway/batches/redis-records.ts), in the account's slot. */
  batchRecords: (account: string) => { files: string; batches: string; content: (fileId: string) => string; claim: (batchId: string) => string };
  /** Batches not finished yet, account and id, for the job that polls them. */
  batchesOpen: string;
  /** A key's sliding window (its name kept from when RPM had a log of its own, so windows survive an upgrade). */
  window: (account: string, key: string) => { calls: string; tpmn: string };
  availability: (part: string) => string;
  consoleSession: (idHash: string) => string;
  consoleSignIn: (address: string) => string;
  /** An OpenID Connect sign-in under way (state, nonce, PKCE verifier), for 10 minutes, taken once. */
  consoleOidcFlow: (idHash: string) => string;
  /** A back-channel logout: a provider session (sid) or subject (sub) whose console sessions end; hashed. */
  consoleOidcLogout: (kind: 'sid' | 'sub', idHash: string) => string;
  /** MCP sessions' last use (sorted set) and records (hash), for the idle TTL; one Cluster slot. */
  mcpSessions: { idle: string; records: string };
}

/** The keys of one account, all hash-tagged {a:<account>} so they share a Cluster slot. */
/** Where one rebuild (token `token`) stages the account's settled ids before its restore (state/money-restore.ts). */
export function settledStage(prefix: string, account: string, token: string): string {
  return `${prefix}:{a:${account}}:settled:stage:${token}`;
}

export function accountKeys(prefix: string, account: string): AccountKeys {
  const t = `${prefix}:{a:${account}}`;
  return {
    acct: `${t}:acct`,
    credits: `${t}:credits`,
    revoked: `${t}:revoked`,
    keyexp: `${t}:keyexp`,
    holds: `${t}:holds`,
    holdrec: `${t}:holdrec`,
    held: `${t}:held`,
    spend: `${t}:spend`,
    settled: `${t}:settled`,
    leases: `${t}:leases`,
    leaseEnds: `${t}:leaseends`,
    usage: `${t}:usage`,
    stripe: `${t}:stripe`,
    billing: `${t}:billing`,
    cache: `${t}:cache`,
    cachex: `${t}:cachex`,
    cachesz: `${t}:cachesz`,
  };
}

export function redisKeys(prefix = 'svc'): RedisKeys {
  const tag = (account: string): string => `${prefix}:{a:${account}}`;
  return {
    prefix,
    configCurrent: `${prefix}:config:current`,
    configHistory: `${prefix}:config:history`,
    configChannel: `${prefix}:config:changed`,
    configSnapshot: (version) => `${prefix}:config:snapshots:${version}`,
    appliedSnapshot: `${prefix}:config:snapshot`,
    key: (hmac) => `${prefix}:key:${hmac}`,
    keys: `${prefix}:keys`,
    lastUsed: `${prefix}:lastused`,
    usageStreams: `${prefix}:usage:streams`,
    moneyGeneration: `${prefix}:money:generation`,
    moneyRebuildLock: `${prefix}:money:rebuild-lock`,
    moneyDrift: `${prefix}:money:drift`,
    moneySlot: (tag) => `${prefix}:money:slot:{${tag}}`,
    account: (account) => accountKeys(prefix, account),
    batchLines: (account, holdId) => `${tag(account)}:blines:${holdId}`,
    batchRecords: (account) => ({
      files: `${tag(account)}:files`,
      batches: `${tag(account)}:batches`,
      content: (fileId) => `${tag(account)}:file:${fileId}`,
      claim: (batchId) => `${tag(account)}:batch-claim:${batchId}`,
    }),
    batchesOpen: `${prefix}:batches:open`,
    window: (account, key) => ({ calls: `${tag(account)}:tpm:${key}`, tpmn: `${tag(account)}:tpmn:${key}` }),
    availability: (part) => `${prefix}:{avail}:${part}`,
    consoleSession: (idHash) => `${prefix}:console:session:${idHash}`,
    consoleSignIn: (address) => `${prefix}:console:signin:${address}`,
    consoleOidcFlow: (idHash) => `${prefix}:console:oidc-flow:${idHash}`,
    consoleOidcLogout: (kind, idHash) => `${prefix}:console:oidc-logout:${kind}:${idHash}`,
    mcpSessions: { idle: `${prefix}:{mcp}:sessions:idle`, records: `${prefix}:{mcp}:sessions` },
  };
}
