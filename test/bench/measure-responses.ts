// The paired figure of stored Responses: on one gateway process (in-memory store; with `postgres`, stored responses
// in a throwaway Postgres), beside a Chat Completions call to the same upstream, POST /v1/responses with store: false
// (translated, nothing kept), with store: true (the response kept after the answer) and continuing a stored response
// (previous_response_id: the chain read and the input rebuilt before the hold). One at a time (what a call adds),
// then saturated over 32 connections (throughput and the gateway's CPU per call).
import { Client, saturate, serial, stats, type Call, type Stats } from './load.ts';
import type { Durations } from './measure.ts';
import { CONNECTIONS } from './measure.ts';
import { cpuSeconds, type Proc } from './procs.ts';
import { CHAT_PATH, type Subject } from './subjects.ts';

export interface ResponsesRow {
  what: string;
  serial: Stats;
  /** p50 one at a time minus the chat call's (ms); null for the chat row. */
  addedP50: number | null;
  rps: number;
  satP50: number;
  cpuUs: number;
  errors: number;
}

const CHAT = JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 });
const responses = (extra: object): string => JSON.stringify({ model: 'bench-chat', input: 'Say something short.', max_output_tokens: 64, ...extra });

async function one(what: string, call: Call, expect: string, d: Durations, gateway: Proc): Promise<Omit<ResponsesRow, 'addedP50'>> {
  const c = new Client(call, 1);
  try {
    const r = await c.text();
    if (r.status !== 200 || !r.body.includes(expect)) throw new Error(`${what} answered ${r.status} to the bench's call: ${r.body.slice(0, 500)}`);
    await saturate(call, CONNECTIONS, d.warmMs);
    const ser = await serial(c, d.serialMs);
    const cpu0 = cpuSeconds(gateway.pid);
    const sat = await saturate(call, CONNECTIONS, d.satMs);
    const cpu = cpuSeconds(gateway.pid) - cpu0;
    const done = sat.latency.count;
    return { what, serial: stats(ser.total), rps: sat.rps, satP50: sat.latency.p50, cpuUs: done > 0 ? (cpu / done) * 1e6 : 0, errors: ser.errors + sat.errors };
  } finally {
    await c.close();
  }
}

export async function measureResponses(s: Subject, d: Durations): Promise<ResponsesRow[]> {
  const gw = s.procs[0] as Proc;
  const url = s.urls[0] as string;
  const headers = { ...s.headers, 'content-type': 'application/json' };
  const at = (path: string, body: string): Call => ({ urls: [url], path, headers, body });
  // The conversation every continued call names (each continues it with store: false, so the chain stays one turn).
  const first = await fetch(`${url}/v1/responses`, { method: 'POST', headers, body: responses({}) });
  const { id } = (await first.json()) as { id: string };
  const chat = await one('chat completion (for comparison)', at(CHAT_PATH, CHAT), '"choices"', d, gw);
  const rows = [
    await one('responses, store: false', at('/v1/responses', responses({ store: false })), '"output"', d, gw),
    await one('responses, store: true (kept after the answer)', at('/v1/responses', responses({ store: true })), '"output"', d, gw),
    await one(
      'responses continuing a stored one (previous_response_id)',
      at('/v1/responses', responses({ store: false, previous_response_id: id })),
      '"output"',
      d,
      gw,
    ),
  ];
  return [{ ...chat, addedP50: null }, ...rows.map((r) => ({ ...r, addedP50: r.serial.p50 - chat.serial.p50 }))];
}

const ms = (x: number): string => x.toFixed(2);

export function responsesReport(title: string, rows: readonly ResponsesRow[]): string {
  const lines = [
    `### Stored Responses: ${title}`,
    '',
    '| call | p50 / p99 one at a time (ms) | p50 over chat (ms) | req/s (saturated, 32 conns) | p50 saturated (ms) | gateway CPU per call (µs) | errors |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${ms(r.serial.p50)} / ${ms(r.serial.p99)} | ${r.addedP50 === null ? '—' : ms(r.addedP50)} | ${Math.round(r.rps).toLocaleString('en-US')} | ${ms(r.satP50)} | ${Math.round(r.cpuUs)} | ${r.errors} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
