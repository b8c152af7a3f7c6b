// A monthly statement of one account: the invoice header and PO number (Account.spec.billing), the opening balance,
// the month's credits (trial, config credits, payments, refunds, disputes, SLA credits), usage lines by model (and by
// key and task in the CSV), and the closing balance. Every figure is an integer nano-USD sum; a figure is rounded to
// the cent once, for display only (ROUNDING_RULE), so the CSV's exact column adds up to the last digit.
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import type { CompiledAccount } from '../../gateway/contract/snapshot.ts';
import { KIND_LABELS, type Kind } from '../../gateway/usage/kind.ts';

export type AccountBilling = NonNullable<CompiledAccount['billing']>;

export const ROUNDING_RULE =
  'Amounts are summed exactly in nano-USD (1e-9 USD) and each amount shown is rounded once to the ' +
  'cent, half away from zero; totals are rounded from the exact sums, not added from rounded lines.';

/** The SLA rule (billing/sla/sla.ts applies it), stated on the statement of an account with an SLA. */
export const SLA_RULE =
  "SLA: per UTC month, each model's uptime = 1 - (time in major outage + half the time in partial outage) " +
  "/ time observed by the status probes and live traffic (maintenance and unobserved time excluded); the account's uptime is " +
  'the uptime of the models that served its calls, weighted by its calls, in percent rounded to 6 decimals. Below the target, ' +
  "the credit is a share of the month's spend on the models below target by tier of that uptime: below 99.9% 10%, below " +
  '99.0% 25%, below 95.0% 100% (a boundary itself is not below it), floored to the nano-USD, applied once as ledger entry sla-YYYY-MM.';

/** A ledger entry in the month (signed: refunds and disputes are negative). */
export interface CreditRow {
  /** ISO time (UTC) the money moved. */
  at: string;
  kind: string;
  reference: string;
  amountNano: number;
}

/** Usage of one (model, key, task, kind) in the month. */
export interface UsageRow {
  model: string;
  apiKey: string;
  taskType: string;
  /** The kind of call (gateway/usage/kind.ts); '' or absent: not recorded (usage rolled up before kinds were). */
  kind?: Kind | '';
  requests: number;
  inputTokens: number;
  /** Output tokens; a rerank's output count is in searchUnits instead. */
  outputTokens: number;
  searchUnits?: number;
  costNano: number;
  feeNano: number;
  /** Calls answered from the response cache, and what they saved against their original calls (nano-USD). */
  cacheHits?: number;
  cacheSavedNano?: number;
  /** Each kind's own units: seconds of audio transcribed, characters spoken, images returned (absent: 0). */
  audioSeconds?: number;
  characters?: number;
  images?: number;
  /** Batch lines among the requests and what they cost at the batch price (part of costNano; absent: 0). */
  batchRequests?: number;
  batchCostNano?: number;
}

export interface StatementData {
  /** Balance at the start of the month: every credit before it minus every settled cost before it. */
  openingNano: number;
  credits: CreditRow[];
  usage: UsageRow[];
}

/** Where a statement's figures come from: Postgres (usage_daily, ledger_credits) or the process's memory. */
export interface StatementSource {
  month(account: string, month: string): Promise<StatementData>;
}

export interface Line {
  label: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  searchUnits: number;
  audioSeconds: number;
  characters: number;
  images: number;
  /** Output tokens of image calls on token-priced routes (imageTokensOf); per-image routes count images instead. */
  imageTokens: number;
  batchRequests: number;
  batchCostNano: number;
  costNano: number;
  feeNano: number;
}

/** A line of the quantities by kind: the kind (or the batch lines) and how much of it in its own unit. */
export interface QuantityLine {
  label: string;
  /** "12.5 minutes of audio", "40,210 characters", "300 at the batch price". */
  quantity: string;
  requests: number;
  costNano: number;
}

export interface Statement {
  account: string;
  /** YYYY-MM */
  month: string;
  /** First and last day, YYYY-MM-DD (UTC). */
  from: string;
  to: string;
  billing: AccountBilling | null;
  openingNano: number;
  credits: CreditRow[];
  creditsNano: number;
  byModel: Line[];
  byKey: Line[];
  /** Usage by kind of call (chat, embeddings, text completions, rerank, moderation, MCP tool calls), each in its units. */
  byKind: Line[];
  /** Each kind in its own unit, then the batch lines (when any) with what they cost at the batch price. */
  quantities: QuantityLine[];
  detail: UsageRow[];
  spendNano: number;
  feeNano: number;
  closingNano: number;
  /** Response cache hits of the month and what they saved (not charged; shown beside the usage). */
  cacheHits: number;
  cacheSavedNano: number;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The month's bounds in ms (UTC), [start, end); null when `month` is not YYYY-MM. */
export function monthRange(month: string): { start: number; end: number; from: string; to: string } | null {
  const m = MONTH.exec(month);
  if (!m) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]) - 1;
  const start = Date.UTC(y, mo, 1);
  const end = Date.UTC(y, mo + 1, 1);
  return { start, end, from: new Date(start).toISOString().slice(0, 10), to: new Date(end - 86_400_000).toISOString().slice(0, 10) };
}

function emptyLine(): Omit<Line, 'label'> {
  return {
    requests: 0,
    inputTokens: 0,
    outputTokens: 0,
    searchUnits: 0,
    audioSeconds: 0,
    characters: 0,
    images: 0,
    imageTokens: 0,
    batchRequests: 0,
    batchCostNano: 0,
    costNano: 0,
    feeNano: 0,
  };
}

/**
 * The image tokens a row's output holds: an image route priced by tokens reports its prompt's tokens in and image
 * tokens out; one priced per image counts images as its output and no input (openai-images.ts imagesUsage), so a
 * row of image calls with no input tokens holds images, not tokens. A row is one served model, priced one way.
 */
function imageTokensOf(r: UsageRow): number {
  return r.kind === 'image' && r.inputTokens > 0 ? r.outputTokens : 0;
}

function addRow(l: Omit<Line, 'label'>, r: UsageRow): void {
  l.requests += r.requests;
  l.inputTokens += r.inputTokens;
  l.outputTokens += r.outputTokens;
  l.searchUnits += r.searchUnits ?? 0;
  l.audioSeconds += r.audioSeconds ?? 0;
  l.characters += r.characters ?? 0;
  l.images += r.images ?? 0;
  l.imageTokens += imageTokensOf(r);
  l.batchRequests += r.batchRequests ?? 0;
  l.batchCostNano += r.batchCostNano ?? 0;
  l.costNano += r.costNano;
  l.feeNano += r.feeNano;
}

function group(rows: readonly UsageRow[], by: (r: UsageRow) => string): Line[] {
  const m = new Map<string, Line>();
  for (const r of rows) {
    const label = by(r);
    let l = m.get(label);
    if (!l) m.set(label, (l = { label, ...emptyLine() }));
    addRow(l, r);
  }
  return [...m.values()].sort((a, b) => b.costNano - a.costNano || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  if (!Number.isSafeInteger(s)) throw new RangeError('a statement sum left the exact integer range');
  return s;
}

const detailKey = (u: UsageRow): string => [u.model, u.apiKey, u.taskType, u.kind ?? ''].join('\u0000');

/** A usage line's description in the CSV: its kind of call (chat and unrecorded usage say Usage, as before kinds). */
export function usageDescription(u: Pick<UsageRow, 'model' | 'kind'>): string {
  if (u.kind === 'mcp' || u.model.startsWith('mcp:')) return 'Tool calls';
  if (!u.kind || u.kind === 'chat') return 'Usage';
  return KIND_LABELS[u.kind];
}

const count = (n: number): string => n.toLocaleString('en-US');
const plural = (n: number, one: string, many: string): string => `${count(n)} ${n === 1 ? one : many}`;

/** Seconds as minutes to the tenth, rounded half up by integer arithmetic: 750 -> "12.5". */
export function minutesText(seconds: number): string {
  const tenths = Math.floor((seconds * 10 + 30) / 60);
  return `${count(Math.floor(tenths / 10))}.${tenths % 10}`;
}

/** Under a minute in seconds ("45 seconds of audio"), else in minutes to the tenth ("12.5 minutes of audio"). */
const audioText = (seconds: number): string => (seconds < 60 ? `${plural(seconds, 'second', 'seconds')} of audio` : `${minutesText(seconds)} minutes of audio`);

/** How much of a kind a line holds, in the kind's own unit (what the upstream billed it by). */
export function quantityOf(kind: Kind | '', l: Omit<Line, 'label'>): string {
  switch (kind) {
    case 'transcription':
      return `${audioText(l.audioSeconds)}${l.inputTokens + l.outputTokens > 0 ? `, ${count(l.inputTokens + l.outputTokens)} tokens` : ''}`;
    case 'speech':
      return `${plural(l.characters, 'character', 'characters')}${l.inputTokens + l.outputTokens > 0 ? `, ${count(l.inputTokens + l.outputTokens)} tokens` : ''}`;
    case 'rerank':
      return plural(l.searchUnits, 'search unit', 'search units');
    case 'mcp':
      return plural(l.requests, 'tool call', 'tool calls');
    case 'image':
      // The images returned on every route; the tokens of the routes priced by them.
      return `${plural(l.images, 'image', 'images')}${l.imageTokens > 0 ? `, ${count(l.inputTokens)} tokens in, ${count(l.imageTokens)} image tokens out` : ''}`;
    case 'moderation':
    case 'embeddings':
      return plural(l.inputTokens, 'token in', 'tokens in');
    case 'chat':
    case 'completions':
    case '':
      return `${count(l.inputTokens)} tokens in, ${count(l.outputTokens)} tokens out`;
    default: {
      const never: never = kind;
      return never;
    }
  }
}

/** The quantities by kind (sorted as byKind: dearest first), then the batch lines when the month had any. */
function quantities(detail: readonly UsageRow[]): QuantityLine[] {
  const kinds = new Map<Kind | '', Omit<Line, 'label'>>();
  const batch = emptyLine();
  for (const u of detail) {
    const k = u.kind ?? '';
    let acc = kinds.get(k);
    if (!acc) kinds.set(k, (acc = emptyLine()));
    addRow(acc, u);
    addRow(batch, u);
  }
  const out = [...kinds]
    .map(([k, l]) => ({ label: KIND_LABELS[k], quantity: quantityOf(k, l), requests: l.requests, costNano: l.costNano }))
    .sort((a, b) => b.costNano - a.costNano || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  if (batch.batchRequests > 0) {
    out.push({
      label: 'Batch lines',
      quantity: `${count(batch.batchRequests)} at the batch price`,
      requests: batch.batchRequests,
      costNano: batch.batchCostNano,
    });
  }
  return out;
}

/** "Transcriptions — 12.5 minutes of audio": a quantity line as the CSV and the PDF write it. */
export const quantityText = (q: QuantityLine): string => `${q.label} \u2014 ${q.quantity}`;

export function buildStatement(account: string, month: string, billing: AccountBilling | null, d: StatementData): Statement {
  const r = monthRange(month);
  if (!r) throw new RangeError(`month must be YYYY-MM, got ${month}`);
  const credits = [...d.credits].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.reference < b.reference ? -1 : 1));
  const detail = [...d.usage].filter((u) => u.requests > 0 || u.costNano !== 0).sort((a, b) => (detailKey(a) < detailKey(b) ? -1 : 1));
  const creditsNano = sum(credits.map((c) => c.amountNano));
  const spendNano = sum(detail.map((u) => u.costNano));
  return {
    account,
    month,
    from: r.from,
    to: r.to,
    billing,
    openingNano: d.openingNano,
    credits,
    creditsNano,
    byModel: group(detail, (u) => u.model),
    byKey: group(detail, (u) => u.apiKey),
    byKind: group(detail, (u) => KIND_LABELS[u.kind ?? '']),
    quantities: quantities(detail),
    detail,
    spendNano,
    feeNano: sum(detail.map((u) => u.feeNano)),
    closingNano: d.openingNano + creditsNano - spendNano,
    cacheHits: sum(detail.map((u) => u.cacheHits ?? 0)),
    cacheSavedNano: sum(detail.map((u) => u.cacheSavedNano ?? 0)),
  };
}

/** The statement's line about the response cache. */
export function cacheLine(s: Pick<Statement, 'cacheHits'>): string {
  return `Saved by the response cache (${s.cacheHits} ${s.cacheHits === 1 ? 'hit' : 'hits'}; not charged, included in usage at their hit cost)`;
}

/** Nano-USD to cents, half away from zero (exact integer arithmetic). */
export function centsOf(nano: number): number {
  const n = Math.abs(nano);
  const cents = Math.floor((n + 5_000_000) / 10_000_000);
  return nano < 0 && cents !== 0 ? -cents : cents;
}

/** "1,234.57" / "-0.05": the cent-rounded display of a nano-USD amount. */
export function money(nano: number): string {
  const c = centsOf(nano);
  const a = Math.abs(c);
  const whole = Math.floor(a / 100).toLocaleString('en-US');
  return `${c < 0 ? '-' : ''}${whole}.${String(a % 100).padStart(2, '0')}`;
}

/** The exact figure with 9 decimals ("-0.000000005"). */
export function exactUsd(nano: number): string {
  const n = Math.abs(nano);
  return `${nano < 0 ? '-' : ''}${Math.floor(n / NANO_PER_USD)}.${String(n % NANO_PER_USD).padStart(9, '0')}`;
}

export const CREDIT_LABELS: Record<string, string> = {
  trial: 'Trial credit',
  credit: 'Credit',
  payment: 'Payment',
  refund: 'Refund',
  'refund-reversed': 'Refund reversed',
  dispute: 'Dispute',
  'dispute-reinstated': 'Dispute reinstated',
  sla: 'SLA credit',
};

export function creditLabel(kind: string): string {
  return CREDIT_LABELS[kind] ?? kind;
}

/** The statement's header lines (account, period, invoice header, PO number, tax id, terms). */
export function headerLines(s: Statement): Array<[string, string]> {
  const b = s.billing;
  const out: Array<[string, string]> = [
    ['Account', s.account],
    ['Period', `${s.from} to ${s.to} (UTC)`],
  ];
  if (b?.poNumber) out.push(['PO number', b.poNumber]);
  if (b?.taxId) out.push(['Tax id', b.taxId]);
  if (b?.netTermsDays !== undefined) out.push(['Payment terms', `net ${b.netTermsDays} days`]);
  if (b?.sla) out.push(['SLA', `${b.sla.target}% monthly uptime; below it a service credit of 10%, 25% or 100% by tier`]);
  return out;
}

function cell(v: string | number, text: boolean): string {
  const s = String(v);
  // Text cells (model, key and task names, references) are defused so a spreadsheet never runs a formula from them.
  const safe = text && /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const CSV_COLUMNS = [
  'section',
  'date',
  'description',
  'model',
  'api_key',
  'task_type',
  'requests',
  'input_tokens',
  'output_tokens',
  'amount_nano',
  'amount_usd_exact',
  'amount_usd',
  'search_units',
  'audio_seconds',
  'characters',
  'images',
  'batch_requests',
  'batch_amount_nano',
] as const;

/** The CSV: header rows, opening, credits, usage by model, key and task, totals; exact and rounded amounts. */
export function statementCsv(s: Statement): string {
  const rows: string[] = [CSV_COLUMNS.join(',')];
  const row = (section: string, date: string, description: string, u: Partial<UsageRow> | null, amount: number | null): void => {
    const a = amount === null ? ['', '', ''] : [String(amount), exactUsd(amount), money(amount).replace(/,/g, '')];
    // Units columns are empty where 0 (most lines have none of them).
    const units = [u?.searchUnits, u?.audioSeconds, u?.characters, u?.images, u?.batchRequests, u?.batchCostNano].map((n) =>
      n === undefined || n === 0 ? '' : String(n),
    );
    rows.push(
      [
        cell(section, false),
        cell(date, false),
        cell(description, true),
        cell(u?.model ?? '', true),
        cell(u?.apiKey ?? '', true),
        cell(u?.taskType ?? '', true),
        u?.requests ?? '',
        u?.inputTokens ?? '',
        u?.outputTokens ?? '',
        ...a,
        ...units,
      ].join(','),
    );
  };
  if (s.billing?.invoiceHeader) for (const l of s.billing.invoiceHeader.split('\n')) row('header', '', `Bill to: ${l}`, null, null);
  for (const [k, v] of headerLines(s)) row('header', '', `${k}: ${v}`, null, null);
  row('header', '', `Rounding: ${ROUNDING_RULE}`, null, null);
  if (s.billing?.sla) row('header', '', SLA_RULE, null, null);
  row('opening', s.from, 'Opening balance', null, s.openingNano);
  for (const c of s.credits) row('credit', c.at.slice(0, 10), `${creditLabel(c.kind)} ${c.reference}`.trim(), null, c.amountNano);
  // Each usage line says its kind: MCP tool calls (model mcp:<server>/<tool>), text completions, rerank (its search
  // units in their own column), moderation, embeddings; chat says Usage.
  for (const u of s.detail) row('usage', '', usageDescription(u), u, u.costNano);
  // Each kind in its own unit, then the batch lines: a summary of the usage lines above (their amounts are already
  // in Usage; a batch line's amount is also in its kind's).
  for (const q of s.quantities) row('kind', '', quantityText(q), { requests: q.requests }, q.costNano);
  row('total', s.to, 'Credits', null, s.creditsNano);
  row('total', s.to, 'Usage', null, s.spendNano);
  row('total', s.to, 'of which platform fee (4%)', null, s.feeNano);
  row('closing', s.to, 'Closing balance', null, s.closingNano);
  // Not money moved: what the month's cache hits would have cost as calls, minus what they were charged.
  if (s.cacheHits > 0) row('info', s.to, cacheLine(s), { requests: s.cacheHits }, s.cacheSavedNano);
  return `${rows.join('\r\n')}\r\n`;
}
