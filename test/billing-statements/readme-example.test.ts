// The Enterprise statements examples of docs/billing.md, run as written: the Account manifest is valid and compiles with its
// billing, and the CLI block (against a test Postgres holding a hand-made November; the files go to a temp folder)
// writes a PDF whose text has the PO number and the closing balance, and a CSV with the same totals.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { account } from '../../crds/schema/index.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { plan } from '../helpers/manifests.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/process.ts';
import { docExample } from '../helpers/docs.ts';

let pg: TestPostgres;

beforeAll(async () => {
  pg = await startPostgres('billing-readme');
  await migrate(pg.pool);
  await pg.pool.query(`INSERT INTO usage_daily (day, account, api_key, task_type, requested_model, served_model, fallback_reason, requests,
    errors, fallbacks, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms_sum)
    VALUES ('2026-11-02', 'acme', 'prod', '', 'mock-large', 'mock-large', '', 40, 0, 0, 4000, 400, 0, 0, 12345678901, 474833803, 0)`);
  await pg.pool.query(`INSERT INTO ledger_credits (account, kind, credit_id, amount_nano, source, reference, occurred_at)
    VALUES ('acme', 'payment', 'evt_1', 50000000000, 'stripe', 'cs_1', '2026-11-01T09:00:00Z')`);
}, 120_000);

afterAll(async () => {
  await pg?.stop();
});

it('the Account manifest is valid and its billing reaches the snapshot', () => {
  const doc = parse(docExample('docs/billing.md', 'account-billing')) as object;
  const a = account.parse(doc);
  expect(a.spec.billing?.poNumber).toBe('PO-2026-0042');
  const c = compile(
    parseManifests([
      { source: 'p', doc: plan('builder', { tier: 1 }) },
      { source: 'a', doc },
    ]).set,
    { pepper: 'p' },
  );
  expect(c.snapshot.accounts.acme?.billing?.sla).toEqual({ target: 99.9 });
});

it('runs the CLI block: a PDF with the PO number and closing balance, and the CSV', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-readme-statement-'));
  writeFileSync(join(dir, 'config.yaml'), `${stringify(plan('builder', { tier: 1 }))}---\n${docExample('docs/billing.md', 'account-billing')}`);
  const script = docExample('docs/billing.md', 'statement')
    .replace('postgres://svc@127.0.0.1/usage', pg.url)
    .replaceAll('config/', join(dir, 'config.yaml'))
    .replaceAll('acme-2026-11.', join(dir, 'acme-2026-11.'));
  const { stdout } = await promisify(execFile)('bash', ['-ec', script], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}` },
  });
  // 50 paid - 12.345678901 used = 37.654321099 -> 37.65
  expect(stdout).toMatch(/PO number:\s+PO-2026-0042/);
  expect(stdout).toMatch(/Closing balance \(opening \+ credits - usage\)\s+37\.65/);
  const csv = readFileSync(join(dir, 'acme-2026-11.csv'), 'utf8');
  expect(csv).toContain('closing,2026-11-30,Closing balance,,,,,,,37654321099,37.654321099,37.65');
  expect(csv).toContain('header,,Bill to: ACME Corp (Europe) B.V.');
});
