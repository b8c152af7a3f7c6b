// Every Lua script of gateway/state/lua/ with its KEYS and ARGV by name (their order is each script's header,
// checked by scripts.test.ts).
import { NamedScript } from './lua-script.ts';

export const SCRIPTS = {
  admit: new NamedScript('admit', {
    lib: true,
    keys: ['acct', 'revoked', 'holds', 'holdrec', 'spend', 'held', 'calls', 'tpmn', 'keyexp'],
    args: ['id', 'keyHash', 'keyName', 'now', 'month', 'rpm', 'tpm', 'budget', 'tokens', 'holdNano', 'deadline', 'keyRevoked'],
  }),
  settle: new NamedScript('settle', {
    lib: true,
    keys: ['acct', 'holds', 'holdrec', 'held', 'spend', 'settled', 'tpmn', 'usage', 'calls'],
    args: ['id', 'keyName', 'month', 'costNano', 'feeNano', 'tokens', 'now', 'settledKeepMs', 'eventJson', 'streamMaxLen', 'freeSlot', 'cacheHit', 'savedNano'],
  }),
  settleLine: new NamedScript('settle-line', {
    lib: true,
    keys: ['acct', 'holds', 'holdrec', 'held', 'spend', 'usage', 'lines', 'settled'],
    args: ['id', 'lineId', 'keyName', 'month', 'lineHoldNano', 'costNano', 'feeNano', 'now', 'eventJson', 'streamMaxLen'],
  }),
  releaseHold: new NamedScript('release-hold', { lib: true, keys: ['acct', 'holds', 'holdrec', 'held', 'lines'], args: ['id', 'now'] }),
  lease: new NamedScript('lease', {
    lib: true,
    keys: ['acct', 'revoked', 'holds', 'holdrec', 'held', 'spend', 'settled', 'usage', 'leases', 'calls', 'tpmn', 'keyexp', 'leaseends'],
    args: ['now', 'settledKeepMs', 'streamMaxLen', 'batchJson', '...events'],
  }),
  applyAccount: new NamedScript('apply-account', { keys: ['acct', 'credits'], args: ['trialNano', '...creditPairs'] }),
  restoreAccount: new NamedScript('restore-account', {
    lib: true,
    keys: ['acct', 'credits', 'spend', 'stripe', 'billing', 'settled', 'stage'],
    args: ['recordJson'],
  }),
  stageSettled: new NamedScript('stage-settled', { lib: true, keys: ['acct', 'stage'], args: ['ttlMs', '...pairs'] }),
  catchUp: new NamedScript('catch-up', { lib: true, keys: ['acct', 'holds', 'holdrec', 'held', 'spend', 'settled'], args: ['eventsJson', 'arm'] }),
  publishKey: new NamedScript('publish-key', { keys: ['record'], args: ['recordJson', 'revoked'] }),
  findKey: new NamedScript('find-key', { readOnly: true, keys: ['record'], args: [] }),
  revokeKey: new NamedScript('revoke-key', { keys: ['record'], args: [] }),
  removeKey: new NamedScript('remove-key', { keys: ['record'], args: [] }),
  view: new NamedScript('view', { keys: ['acct', 'spend'], args: ['month', 'keyName'] }),
  ledger: new NamedScript('ledger', { keys: ['acct', 'holds'], args: [] }),
  billing: new NamedScript('billing', {
    lib: true,
    keys: ['acct', 'stripe', 'entries'],
    args: ['op', 'eventId', 'objectId', 'paymentIntent', 'amountNano', 'entryJson', 'status'],
  }),
  cacheGet: new NamedScript('cache-get', { readOnly: true, keys: ['entries', 'index'], args: ['sha', 'now'] }),
  cachePut: new NamedScript('cache-put', { keys: ['entries', 'index', 'sizes'], args: ['sha', 'entryJson', 'ttlMs', 'now', 'budgetBytes'] }),
  mcpTouch: new NamedScript('mcp-touch', { keys: ['idle'], args: ['sid', 'now', 'oldest'] }),
  mcpClaimIdle: new NamedScript('mcp-claim-idle', { keys: ['idle', 'records'], args: ['oldest', 'max'] }),
} as const;
