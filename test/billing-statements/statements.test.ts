// Monthly statements on a hand-made month in a real Postgres: exact nano-USD totals (lines add up to the total,
// opening + credits - usage == closing, the next month opens where this one closed), the CSV and the PDF agree
// (the PDF read back by Debian's pdftotext), the CLI writes the same statement, the PDF writer escapes what it must;
// the billing page links them (Chromium, axe), and a user without manage-billing gets 403 on the statement URLs.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Browser, Page } from 'playwright-core';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authenticator, Authorizer, Principal, Verb } from '../../console/auth/principal.ts';
import { MemorySessions } from '../../console/auth/sessions.ts';
import { MemorySignInLimit } from '../../console/auth/sign-in-limit.ts';
import { renderPdf } from '../../billing/statements/pdf.ts';
import { statementPdf } from '../../billing/statements/statement-pdf.ts';
import { PostgresStatementSource } from '../../billing/statements/statement-source.ts';
import { buildStatement, centsOf, money, ROUNDING_RULE, statementCsv, type Statement } from '../../billing/statements/statement.ts';
import { standaloneBilling } from '../../billing/wiring.ts';
import { MemoryPublisher } from '../../console/keys/publisher.ts';
import { MemoryRegistry } from '../../console/keys/registry.ts';
import { StandaloneKeys } from '../../console/keys/standalone-backend.ts';
import { consolePlugin } from '../../console/server/plugin.ts';
import { MemoryUsageSource } from '../../console/usage/memory-source.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { MemoryLastUsed } from '../../gateway/state/last-used.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import { expectAccessible, launchBrowser } from '../console/browser.ts';
import { account, basics } from '../helpers/manifests.ts';
import { ROOT } from '../helpers/process.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

const run = promisify(execFile);
const HEADER = 'ACME Corp (Europe) B.V.\n1 Road (Unit 2), 1011 AB Amsterdam\nVAT NL123456789B01';
const BILLING = { invoiceHeader: HEADER, poNumber: 'PO-2026/11\\A', taxId: 'NL123456789B01', netTermsDays: 30, sla: { target: 99.9 } };
const TOKENS: Record<string, Principal> = {
  'alice-token-0123456789abcdef': { kind: 'user', username: 'alice', uid: 'a', groups: [], extra: {} },
  'bob-token-0123456789abcdef01': { kind: 'user', username: 'bob', uid: 'b', groups: [], extra: {} },
};
/** alice may manage acme's billing; bob may only see acme. */
const RIGHTS: Record<string, Verb[]> = { alice: ['get', 'manage-billing'], bob: ['get', 'view-usage'] };

class TestAuth implements Authenticator, Authorizer {
  readonly mode = 'admin-token' as const;
  readonly reviewEveryMs = null;
  async authenticate(token: string): Promise<Principal | null> {
    return TOKENS[token] ?? null;
  }
  async allowed(p: Principal, verb: Verb, acct: string): Promise<boolean> {
    return p.kind === 'user' && acct === 'acme' && (RIGHTS[p.username] ?? []).includes(verb);
  }
}

let pg: TestPostgres;
let app: FastifyInstance;
let base: string;
let browser: Browser;
let page: Page;
let docs: object[];

// The month: November 2026. Usage before (October), in, and after (December); credits likewise.
const USAGE: Array<[string, string, string, string, number, number, number, number, number]> = [
  // day, api_key, task, served model, requests, in, out, cost_nano, fee_nano
  ['2026-10-31', 'builder-key', 'chat', 'mock-large', 3, 300, 30, 700_000_001, 26_923_077],
  ['2026-11-01', 'builder-key', 'chat', 'mock-large', 10, 1000, 100, 1_234_567_891, 47_483_380],
  ['2026-11-15', 'builder-key', '', 'mock-mini', 7, 700, 70, 5_000_001, 192_307],
  ['2026-11-30', 'ops-key', 'batch', 'mock-large', 2, 200, 20, 333_333_333, 12_820_512],
  ['2026-11-30', 'ops-key', 'batch', '=HYPERLINK("x")', 1, 10, 1, 4_999_999, 192_307],
  ['2026-12-01', 'builder-key', 'chat', 'mock-large', 5, 500, 50, 999_999_999, 38_461_538],
];
const CREDITS: Array<[string, string, string, number, string, string | null]> = [
  // account, kind, credit_id, amount_nano, source, occurred_at
  ['acme', 'trial', '', 1_000_000_000, 'config', '2026-10-01T00:00:00Z'],
  ['acme', 'payment', 'evt_1', 25_000_000_000, 'stripe', '2026-11-03T10:00:00Z'],
  ['acme', 'refund', 'evt_2', -5_500_000_000, 'stripe', '2026-11-04T10:00:00Z'],
  ['acme', 'credit', 'c1', 100_000_000_000, 'config', '2026-11-30T23:59:59Z'],
  ['acme', 'payment', 'evt_3', 7_000_000_000, 'stripe', '2026-12-01T00:00:00Z'],
  ['hobby', 'payment', 'evt_4', 9_000_000_000, 'stripe', '2026-11-05T00:00:00Z'],
];

beforeAll(async () => {
  pg = await startPostgres('billing-statements');
  await migrate(pg.pool);
  for (const [day, key, task, model, req, inT, outT, cost, fee] of USAGE) {
    await pg.pool.query(
      `INSERT INTO usage_daily (day, account, api_key, task_type, requested_model, served_model, fallback_reason, requests,
      errors, fallbacks, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms_sum)
      VALUES ($1, 'acme', $2, $3, 'mock-large', $4, '', $5, 0, 0, $6, $7, 0, 0, $8, $9, 0)`,
      [day, key, task, model, req, inT, outT, cost, fee],
    );
  }
  for (const [acct, kind, id, amount, source, at] of CREDITS) {
    await pg.pool.query(
      `INSERT INTO ledger_credits (account, kind, credit_id, amount_nano, source, reference, occurred_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [acct, kind, id, amount, source, source === 'stripe' ? `ref_${id}` : null, at],
    );
  }
  // The console, in this process: alice may manage acme's billing, bob may not; statements from Postgres.
  docs = [
    ...basics().docs.filter(
      (d) => !((d as { kind: string; metadata: { name: string } }).kind === 'Account' && (d as { metadata: { name: string } }).metadata.name === 'acme'),
    ),
    account('acme', 'builder', { billing: BILLING } as never),
  ];
  const c = compile(parseManifests(docs.map((doc, i) => ({ source: `t#${i}`, doc }))).set, { pepper: 'p' });
  const store = new MemoryStore(new MemoryUsageSink());
  await store.applyConfig(c.snapshot, c.keys);
  const keys = new StandaloneKeys({
    snapshot: c.snapshot,
    configKeys: c.keys,
    pepper: 'p',
    store,
    lastUsed: new MemoryLastUsed(),
    publisher: new MemoryPublisher(store, c.snapshot, c.keys),
    registry: new MemoryRegistry(),
  });
  const auth = new TestAuth();
  const billing = standaloneBilling({ DATABASE_URL: pg.url }, c.snapshot, { kind: 'memory', store });
  app = Fastify();
  await app.register(
    consolePlugin({
      authn: auth,
      authz: auth,
      keys,
      billing,
      sessions: new MemorySessions(),
      signInLimit: new MemorySignInLimit(),
      now: () => Date.parse('2026-12-02T12:00:00Z'),
      exampleModel: 'm',
      usage: new MemoryUsageSource(async () => []),
    }),
  );
  app.addHook('onClose', async () => billing.close?.());
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchBrowser();
  const context = await browser.newContext({ acceptDownloads: true });
  context.setDefaultTimeout(10_000);
  page = await context.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await pg?.stop();
});

async function november(acct = 'acme'): Promise<Statement> {
  return buildStatement(
    acct,
    '2026-11',
    acct === 'acme' ? { ...BILLING, sla: { target: 99.9 } } : null,
    await new PostgresStatementSource(pg.pool).month(acct, '2026-11'),
  );
}

async function pdfText(pdf: Buffer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-statement-'));
  writeFileSync(join(dir, 's.pdf'), pdf);
  // pdftotext (Debian poppler-utils; .ci/run installs it) also checks the file's structure: it fails on a broken xref.
  const { stdout, stderr } = await run('pdftotext', ['-layout', join(dir, 's.pdf'), '-']);
  expect(stderr).toBe('');
  return stdout;
}

function csvRows(csv: string): Array<Record<string, string>> {
  const lines = csv.trimEnd().split('\r\n');
  const parse = (l: string): string[] => {
    const out: string[] = [];
    let cur = '';
    let q = false;
    for (let i = 0; i < l.length; i++) {
      const ch = l[i] as string;
      if (q && ch === '"' && l[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') q = !q;
      else if (ch === ',' && !q) {
        out.push(cur);
        cur = '';
      } else cur += ch;
    }
    out.push(cur);
    return out;
  };
  const head = parse(lines[0] as string);
  return lines.slice(1).map((l) => Object.fromEntries(parse(l).map((v, i) => [head[i], v])));
}

describe('a hand-made month, exact', () => {
  it('opens, credits, spends and closes to the nano-USD', async () => {
    const s = await november();
    expect(s.openingNano).toBe(1_000_000_000 - 700_000_001);
    expect(s.credits.map((c) => [c.kind, c.amountNano])).toEqual([
      ['payment', 25_000_000_000],
      ['refund', -5_500_000_000],
      ['credit', 100_000_000_000],
    ]);
    expect(s.creditsNano).toBe(119_500_000_000);
    expect(s.spendNano).toBe(1_234_567_891 + 5_000_001 + 333_333_333 + 4_999_999);
    expect(s.byModel.reduce((a, l) => a + l.costNano, 0)).toBe(s.spendNano);
    expect(s.byKey.reduce((a, l) => a + l.costNano, 0)).toBe(s.spendNano);
    expect(s.feeNano).toBe(47_483_380 + 192_307 + 12_820_512 + 192_307);
    expect(s.closingNano).toBe(s.openingNano + s.creditsNano - s.spendNano);
    expect(s.closingNano).toBe(118_222_098_775);
    // December opens where November closed.
    const dec = await new PostgresStatementSource(pg.pool).month('acme', '2026-12');
    expect(dec.openingNano).toBe(s.closingNano);
  });

  it('rounds once, to the cent, half away from zero', () => {
    expect([centsOf(5_000_000), centsOf(4_999_999), centsOf(-5_000_000), centsOf(-4_999_999), centsOf(1_234_567_891)]).toEqual([1, 0, -1, 0, 123]);
    expect(money(118_222_098_775)).toBe('118.22');
    expect(money(-5_500_000_000)).toBe('-5.50');
    expect(money(123_456_789_000_000)).toBe('123,456.79');
  });

  it('writes a CSV whose exact amounts add up and whose names run no formula', async () => {
    const s = await november();
    const rows = csvRows(statementCsv(s));
    const sumOf = (section: string): number => rows.filter((r) => r.section === section).reduce((a, r) => a + Number(r.amount_nano), 0);
    const total = (d: string): string => rows.find((r) => r.section === 'total' && r.description === d)?.amount_nano as string;
    expect(sumOf('usage')).toBe(s.spendNano);
    expect(Number(total('Usage'))).toBe(s.spendNano);
    expect(sumOf('credit')).toBe(s.creditsNano);
    expect(Number(total('Credits'))).toBe(s.creditsNano);
    const closing = rows.find((r) => r.section === 'closing') as Record<string, string>;
    expect(Number(closing.amount_nano)).toBe(sumOf('opening') + sumOf('credit') - sumOf('usage'));
    expect(closing.amount_usd_exact).toBe('118.222098775');
    expect(closing.amount_usd).toBe('118.22');
    expect(rows.filter((r) => r.section === 'header').map((r) => r.description)).toEqual(
      expect.arrayContaining([
        'Bill to: ACME Corp (Europe) B.V.',
        'PO number: PO-2026/11\\A',
        'Tax id: NL123456789B01',
        'Payment terms: net 30 days',
        `Rounding: ${ROUNDING_RULE}`,
      ]),
    );
    expect(rows.find((r) => r.model?.includes('HYPERLINK'))?.model).toBe('\'=HYPERLINK("x")');
    expect(rows.filter((r) => r.section === 'usage').map((r) => r.task_type)).toContain('');
  });

  it("writes a PDF that pdftotext reads back with the header, PO number and the CSV's totals", async () => {
    const s = await november();
    const pdf = await statementPdf(s);
    expect(pdf.subarray(0, 8).toString('latin1')).toBe('%PDF-1.7');
    expect((await statementPdf(s)).equals(pdf)).toBe(true); // deterministic
    const t = await pdfText(pdf);
    for (const line of HEADER.split('\n')) expect(t).toContain(line);
    expect(t).toContain('PO-2026/11\\A');
    expect(t).toMatch(/Opening balance\s+0\.30\b/);
    expect(t).toMatch(/Credits, payments and refunds\s+119\.50\b/);
    expect(t).toMatch(/Usage\s+1\.58\b/);
    expect(t).toMatch(/Closing balance \(opening \+ credits - usage\)\s+118\.22\b/);
    expect(t).toMatch(/Refund\s+ref_evt_2\s+-5\.50/);
    expect(t).toMatch(/mock-large\s+12\s+1200\s+120\s+1\.57\b/);
    expect(t).toContain('=HYPERLINK("x")');
    expect(t.replace(/\s+/g, ' ')).toContain('rounded once to the cent, half away from zero');
    const csv = csvRows(statementCsv(s));
    expect(t).toContain(money(Number(csv.find((r) => r.section === 'closing')?.amount_nano)));
  });

  it('keeps parentheses, backslashes and accents, shows ? for what no shipped font has, and pages a long table', async () => {
    const lines = Array.from({ length: 150 }, (_, i) => ({ cells: [{ x: 50, text: `row ${i} (a) \\ b) é \u{1F600} ${'x'.repeat(3)}` }] }));
    const pdf = await renderPdf(lines, { title: 'T (1)', createdAt: new Date(0) });
    const t = await pdfText(pdf);
    expect(t).toContain('row 0 (a) \\ b) é ? xxx');
    expect(t).toContain('row 149 (a)');
    expect(t.split('\f').filter((p) => p.trim()).length).toBe(3); // 56 lines of 9 pt a page
    expect(pdf.toString('latin1')).toMatch(/\/Count 3\b/);
  });

  // Issue 22 item 3: the legal names enterprise customers have, in their own letters (the old writer printed '?').
  it('prints German, Greek, Cyrillic, Japanese and Hebrew invoice headers that pdftotext reads back, on A4 and Letter', async () => {
    const names = ['Müller GmbH, Straße 5', 'Ελληνική Εταιρεία Α.Ε.', 'ООО «Ромашка»', '株式会社テスト商事 東京都千代田区', 'שלום בע"מ', 'Société Générale'];
    const s = buildStatement(
      'acme',
      '2026-11',
      { ...BILLING, invoiceHeader: names.join('\n') },
      await new PostgresStatementSource(pg.pool).month('acme', '2026-11'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'svc-statement-unicode-'));
    for (const paper of ['A4', 'LETTER'] as const) {
      const pdf = await statementPdf(s, { paper });
      const file = join(dir, `${paper}.pdf`);
      writeFileSync(file, pdf);
      // pdftotext marks right-to-left text with embedding controls (U+202B ... U+202C): the letters are what count.
      const t = (await pdfText(pdf)).replace(/[\u202a-\u202e]/g, '');
      for (const n of names) expect(t).toContain(n);
      expect(t).toMatch(/Closing balance \(opening \+ credits - usage\)\s+118\.22\b/);
      const info = (await run('pdfinfo', [file])).stdout;
      expect(info).toMatch(paper === 'A4' ? /Page size:\s+595\.28 x 841\.89 pts \(A4\)/ : /Page size:\s+612 x 792 pts \(letter\)/);
      expect(info).toMatch(/Title:\s+Statement acme 2026-11/);
      expect(info).toMatch(/Author:\s+svc-gateway/);
      expect(info).toMatch(/Metadata Stream:\s+yes/); // the XMP metadata of PDF/A-2b
      // Every font embedded and subsetted (nothing left for the reader's OS to supply).
      const fonts = (await run('pdffonts', [file])).stdout
        .split('\n')
        .slice(2)
        .filter((l) => l.trim());
      expect(fonts.length).toBeGreaterThan(3);
      for (const f of fonts) expect(f).toMatch(/^[A-Z]{6}\+\S+\s+CID TrueType\s+Identity-H\s+yes yes yes/);
    }
  });

  it('npm run statement writes the same statement from Postgres', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-statement-cli-'));
    writeFileSync(join(dir, 'config.yaml'), docs.map((d) => stringify(d)).join('---\n'));
    const env = { ...process.env, DATABASE_URL: pg.url };
    const cli = ['billing/statement-main.ts', '--account', 'acme', '--month', '2026-11', '--config', join(dir, 'config.yaml')];
    await run(process.execPath, [...cli, '--format', 'pdf', '--out', join(dir, 's.pdf')], { cwd: ROOT, env });
    const csv = await run(process.execPath, [...cli, '--format', 'csv'], { cwd: ROOT, env });
    expect(csv.stdout).toBe(statementCsv(await november()));
    expect(readFileSync(join(dir, 's.pdf')).equals(await statementPdf(await november()))).toBe(true);
    await run(process.execPath, [...cli, '--format', 'pdf', '--paper', 'letter', '--out', join(dir, 'l.pdf')], { cwd: ROOT, env });
    expect(readFileSync(join(dir, 'l.pdf')).equals(await statementPdf(await november(), { paper: 'LETTER' }))).toBe(true);
    const bad = await run(process.execPath, [...cli, '--format', 'doc'], { cwd: ROOT, env }).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toContain('--format must be pdf or csv');
    const paper = await run(process.execPath, [...cli, '--format', 'pdf', '--paper', 'a3'], { cwd: ROOT, env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(paper).toMatchObject({ code: 2 });
    expect((paper as { stderr: string }).stderr).toContain('--paper must be a4 or letter');
  });
});

describe('the console', () => {
  async function signInAs(token: string): Promise<void> {
    await page.context().clearCookies();
    await page.goto(`${base}/dashboard/login`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\//);
  }

  it("links this month's and the two previous statements on the billing page, and serves them", async () => {
    await signInAs('alice-token-0123456789abcdef');
    await page.goto(`${base}/dashboard/billing?account=acme`);
    const section = page.getByRole('region', { name: 'Monthly statements' });
    expect(await section.innerText()).toContain('PO-2026/11\\A');
    expect(await section.innerText()).toContain('1 Road (Unit 2), 1011 AB Amsterdam');
    await expectAccessible(page, 'billing with statements');
    const pdfLink = section.getByRole('link', { name: 'PDF statement 2026-11' });
    expect(await pdfLink.getAttribute('href')).toBe('/dashboard/billing/statements/2026-11.pdf?account=acme');
    expect(await section.getByRole('link', { name: 'CSV statement 2026-10' }).count()).toBe(1);
    const download = page.waitForEvent('download');
    await pdfLink.click();
    const file = await (await download).path();
    expect(readFileSync(file).equals(await statementPdf(await november()))).toBe(true);
    const csv = await page.request.get(`${base}/dashboard/billing/statements/2026-11.csv?account=acme`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toBe('text/csv; charset=utf-8');
    expect(await csv.text()).toBe(statementCsv(await november()));
    const letter = await page.request.get(`${base}/dashboard/billing/statements/2026-11.pdf?account=acme&paper=letter`);
    expect(letter.status()).toBe(200);
    expect((await letter.body()).equals(await statementPdf(await november(), { paper: 'LETTER' }))).toBe(true);
    expect((await page.request.get(`${base}/dashboard/billing/statements/2026-11.pdf?account=acme&paper=a3`)).status()).toBe(404);
  });

  it("answers 403 to a user without manage-billing, and to another account's statement", async () => {
    const other = await page.request.get(`${base}/dashboard/billing/statements/2026-11.csv?account=hobby`);
    expect(other.status()).toBe(403);
    const bad = await page.request.get(`${base}/dashboard/billing/statements/2026-13.pdf?account=acme`);
    expect(bad.status()).toBe(404);
    await signInAs('bob-token-0123456789abcdef01');
    for (const f of ['2026-11.pdf', '2026-11.csv']) {
      const r = await page.request.get(`${base}/dashboard/billing/statements/${f}?account=acme`);
      expect(r.status()).toBe(403);
      expect(await r.text()).not.toContain('118.22');
    }
    await page.context().clearCookies();
    const anon = await page.request.get(`${base}/dashboard/billing/statements/2026-11.pdf?account=acme`, { maxRedirects: 0 });
    expect(anon.status()).toBeGreaterThanOrEqual(300);
    expect(anon.status()).toBeLessThan(400);
  });
});
