// npm run statement -- --account <name> --month YYYY-MM --format pdf|csv [--paper a4|letter] [--out FILE] [--config PATH]
// A monthly statement from Postgres (DATABASE_URL): usage_daily and ledger_credits, as the console serves it. The
// invoice header, PO number and SLA come from the Account in --config (the manifests, a file or a folder; default
// $SVC_CONFIG); without it the statement has no header block. Writes to --out, else to stdout.
// --apply-sla (with REDIS_URL, after the month ended): computes the month's SLA from the status history (--history
// redis: what the operator's leader keeps in Redis, the default; postgres: probe_results, what npm start keeps with
// DATABASE_URL) and applies its credit once (ledger entry sla-YYYY-MM; safe to run again, and on several replicas), copies it to
// Postgres, then writes the statement, which lists it.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseManifests, readManifestFiles, formatIssue } from '../gateway/config/manifests.ts';
import { PostgresHistory } from '../gateway/availability/postgres-history.ts';
import { RedisHistory } from '../gateway/availability/redis-history.ts';
import { RedisBilling } from '../gateway/state/billing-ledger.ts';
import { connectRedis, redisConnectionFromEnv } from '../gateway/state/redis-connect.ts';
import { recordBillingEntries } from '../gateway/usage/postgres/billing-credits.ts';
import { createPool } from '../gateway/usage/postgres/pool.ts';
import { runSla } from './sla/sla.ts';
import { paperOf, statementPdf } from './statements/statement-pdf.ts';
import { PostgresStatementSource } from './statements/statement-source.ts';
import { buildStatement, monthRange, statementCsv, type AccountBilling } from './statements/statement.ts';

const USAGE =
  'usage: npm run statement -- --account <name> --month YYYY-MM --format pdf|csv [--paper a4|letter] [--out FILE] [--config PATH] [--apply-sla [--history redis|postgres]]  (DATABASE_URL; REDIS_URL for --apply-sla)';

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function billingFrom(path: string | undefined, account: string): AccountBilling | null {
  if (!path) return null;
  const read = readManifestFiles(path);
  const parsed = parseManifests(read.docs);
  const errors = [...read.errors, ...parsed.errors];
  if (errors.length > 0) fail(`the manifests in ${path} have errors:\n${errors.map(formatIssue).join('\n')}`);
  const a = parsed.set.accounts.find((x) => x.metadata.name === account);
  if (!a) fail(`no Account ${account} in ${path}`);
  return a.spec.billing ?? null;
}

const { values } = parseArgs({
  options: {
    account: { type: 'string' },
    month: { type: 'string' },
    format: { type: 'string' },
    out: { type: 'string' },
    config: { type: 'string' },
    'apply-sla': { type: 'boolean' },
    history: { type: 'string' },
    paper: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const { account, month, format } = values;
if (!account) fail('--account is required');
if (!month || !monthRange(month)) fail('--month must be YYYY-MM');
if (format !== 'pdf' && format !== 'csv') fail('--format must be pdf or csv');
const paper = paperOf(values.paper ?? 'a4');
if (!paper) fail('--paper must be a4 or letter');
const url = process.env.DATABASE_URL;
if (!url) fail('DATABASE_URL is required: statements are read from Postgres');
const billing = billingFrom(values.config ?? (process.env.SVC_CONFIG || undefined), account);
const pool = createPool(url, { max: 2, statementTimeoutMs: 60_000 });

async function applySla(acct: string, m: string): Promise<void> {
  const redisUrl = process.env.REDIS_URL;
  if (!redisUrl) fail('--apply-sla needs REDIS_URL: the status history and the billing ledger are there');
  if (!billing?.sla) fail(`Account ${acct} has no spec.billing.sla in --config: no SLA to apply`);
  const redis = await connectRedis(redisConnectionFromEnv(redisUrl, process.env));
  try {
    const prefix = process.env.SVC_REDIS_PREFIX || 'svc';
    const ledger = new RedisBilling(redis, prefix);
    const from = values.history ?? 'redis';
    if (from !== 'redis' && from !== 'postgres') fail('--history must be redis or postgres');
    const history = from === 'redis' ? new RedisHistory(redis, prefix) : new PostgresHistory(pool);
    const r = await runSla({ source: new PostgresStatementSource(pool), history, ledger }, acct, billing, m, Date.now());
    if (!r) fail(`the month ${m} has not ended yet: its uptime is not final`);
    const u = r.outcome.uptime === null ? 'no data' : `${(r.outcome.uptime * 100).toFixed(3)}%`;
    process.stderr.write(
      `SLA ${m}: uptime ${u}, target ${r.outcome.targetPercent}%, credit ${r.outcome.creditNano} nano-USD, ${r.result?.verdict ?? 'nothing to credit'}\n`,
    );
    await recordBillingEntries(pool, acct, await ledger.entries(acct));
  } finally {
    redis.disconnect();
  }
}
try {
  if (values['apply-sla']) await applySla(account, month);
  const s = buildStatement(account, month, billing, await new PostgresStatementSource(pool).month(account, month));
  const body = format === 'pdf' ? await statementPdf(s, { paper }) : Buffer.from(statementCsv(s), 'utf8');
  if (values.out) writeFileSync(values.out, body);
  else process.stdout.write(body);
} finally {
  await pool.end();
}
