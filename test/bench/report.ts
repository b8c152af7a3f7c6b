// The bench's printed report: two tables (JSON calls, SSE streams), the ratios ours/floor and ours/peer, and
// where each gateway row stands on the targets. Figures are measured, never asserted.
import type { Loaded, SubjectResult } from './measure.ts';
import { CONNECTIONS, FIXED_RATE } from './measure.ts';

const ms = (v: number): string => v.toFixed(2);
const int = (v: number): string => Math.round(v).toLocaleString('en-US');
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
const cpu = (l: Loaded): string => (l.redisCpuUs > 0 ? `${int(l.cpuUs)} (Redis ${int(l.redisCpuUs)})` : int(l.cpuUs));

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function table(head: string[], rows: string[][]): string {
  return [row(head), row(head.map(() => '---')), ...rows.map(row)].join('\n');
}

export function jsonTable(rs: SubjectResult[], direct: SubjectResult | undefined): string {
  const head = [
    'subject',
    'processes',
    `req/s (saturated, ${CONNECTIONS} conns)`,
    'req/s per process',
    'p50 / p99 saturated (ms)',
    'p50 one at a time (ms)',
    'added p50 (ms)',
    `p50 / p99 at ${FIXED_RATE} req/s (ms)`,
    `added p99 at ${FIXED_RATE} req/s (ms)`,
    'CPU per request (µs)',
    'RSS (MB)',
  ];
  return table(
    head,
    rs.map((r) => {
      const j = r.json;
      return [
        r.name,
        String(r.servers),
        int(j.sat.rps),
        int(j.sat.rps / r.servers),
        `${ms(j.sat.latency.p50)} / ${ms(j.sat.latency.p99)}`,
        ms(j.serial.p50),
        ms(j.serial.p50 - (direct?.json.serial.p50 ?? 0)),
        `${ms(j.fixed.p50)} / ${ms(j.fixed.p99)}`,
        ms(j.fixed.p99 - (direct?.json.fixed.p99 ?? 0)),
        cpu(j),
        int(j.rssMb),
      ];
    }),
  );
}

export function streamTable(rs: SubjectResult[], direct: SubjectResult | undefined): string {
  const head = [
    'subject',
    `streams/s (saturated, ${CONNECTIONS} conns)`,
    'streams/s per process',
    'p50 / p99 saturated (ms)',
    'TTFB p50 one at a time (ms)',
    'added TTFB p50 (ms)',
    'whole stream p50 (ms)',
    'CPU per stream (µs)',
    'RSS (MB)',
    'paced chunks arriving apart',
  ];
  return table(
    head,
    rs.map((r) => {
      const s = r.stream;
      return [
        r.name,
        int(s.sat.rps),
        int(s.sat.rps / r.servers),
        `${ms(s.sat.latency.p50)} / ${ms(s.sat.latency.p99)}`,
        ms(s.ttfb.p50),
        ms(s.ttfb.p50 - (direct?.stream.ttfb.p50 ?? 0)),
        ms(s.total.p50),
        cpu(s),
        int(s.rssMb),
        `${s.pacedGaps}/${s.pacedChunks}`,
      ];
    }),
  );
}

const isOurs = (r: SubjectResult): boolean => r.name.startsWith('gateway');

export function ratios(rs: SubjectResult[]): string {
  const floor = rs.find((r) => r.name === 'floor');
  const peer = rs.find((r) => r.name === 'portkey');
  const rows: string[][] = [];
  for (const r of rs.filter(isOurs)) {
    for (const base of [floor, peer]) {
      if (!base) continue;
      rows.push([
        `${r.name} / ${base.name}`,
        ratio(r.json.sat.rps / r.servers, base.json.sat.rps / base.servers),
        ratio(r.stream.sat.rps / r.servers, base.stream.sat.rps / base.servers),
        ratio(r.json.cpuUs, base.json.cpuUs),
        ratio(r.json.rssMb, base.json.rssMb),
      ]);
    }
  }
  return table(['ratio', 'JSON req/s per process', 'streams/s per process', 'CPU per request', 'RSS'], rows);
}

function mark(ok: boolean): string {
  return ok ? 'met' : 'MISSED';
}

/** Where each gateway row stands on the targets of issue #8. */
export function targets(rs: SubjectResult[]): string {
  const direct = rs.find((r) => r.name === 'direct');
  const floor = rs.find((r) => r.name === 'floor');
  const peer = rs.find((r) => r.name === 'portkey');
  const lines: string[] = [];
  for (const r of rs.filter(isOurs)) {
    const perProc = r.json.sat.rps / r.servers;
    if (floor)
      lines.push(
        `- ${r.name}: throughput per process ${ratio(perProc, floor.json.sat.rps)} of the floor (target >= 0.75x): ${mark(perProc >= 0.75 * floor.json.sat.rps)}`,
      );
    if (peer)
      lines.push(
        `- ${r.name}: throughput per process ${ratio(perProc, peer.json.sat.rps)} the peer's (target >= 6x): ${mark(perProc >= 6 * peer.json.sat.rps)}`,
      );
    if (direct) {
      const added = r.json.serial.p50 - direct.json.serial.p50;
      lines.push(`- ${r.name}: added p50 one at a time ${ms(added)} ms (target < 0.5 ms): ${mark(added < 0.5)}`);
      const p99 = r.json.fixed.p99 - direct.json.fixed.p99;
      lines.push(`- ${r.name}: added p99 at ${FIXED_RATE} req/s ${ms(p99)} ms, absolute ${ms(r.json.fixed.p99)} ms (target < 2 ms): ${mark(p99 < 2)}`);
      const ttfb = r.stream.ttfb.p50 - direct.stream.ttfb.p50;
      lines.push(`- ${r.name}: added time to first byte p50 ${ms(ttfb)} ms (target < 1 ms): ${mark(ttfb < 1)}`);
    }
    const s = r.stream;
    // A hit replays a stored stream at once: there is no upstream pace to keep.
    if (r.name.endsWith('-cache-hit')) continue;
    lines.push(
      `- ${r.name}: paced upstream chunks arriving apart ${s.pacedGaps}/${s.pacedChunks} (target: every chunk written through): ${mark(s.pacedChunks > 0 && s.pacedGaps === s.pacedChunks)}`,
    );
  }
  return lines.join('\n');
}

/** The response cache's hit next to its miss (and the gateway on Redis without a cache), when they were measured. */
export function cacheTable(rs: SubjectResult[]): string {
  const rows = ['gateway-redis', 'gateway-redis-cache-miss', 'gateway-redis-cache-hit'].flatMap((n) => rs.filter((r) => r.name === n));
  if (!rows.some((r) => r.name.includes('-cache-'))) return '';
  const head = [
    'subject',
    'CPU per request (µs)',
    'p50 one at a time (ms)',
    'req/s (saturated)',
    'CPU per stream (µs)',
    'TTFB p50 (ms)',
    'whole stream p50 (ms)',
  ];
  return [
    '### Response cache: a hit next to a miss (one process on Redis)',
    '',
    table(
      head,
      rows.map((r) => [r.name, cpu(r.json), ms(r.json.serial.p50), int(r.json.sat.rps), cpu(r.stream), ms(r.stream.ttfb.p50), ms(r.stream.total.p50)]),
    ),
    '',
  ].join('\n');
}

export function report(rs: SubjectResult[]): string {
  const direct = rs.find((r) => r.name === 'direct');
  return [
    '### Non-streaming: POST /v1/chat/completions, fixed JSON reply',
    '',
    jsonTable(rs, direct),
    '',
    '### Streaming: the same call with stream: true (20 SSE chunks, usage in the last)',
    '',
    streamTable(rs, direct),
    '',
    cacheTable(rs),
    '### Ratios (per process)',
    '',
    ratios(rs),
    '',
    '### Targets',
    '',
    targets(rs),
    '',
  ].join('\n');
}
