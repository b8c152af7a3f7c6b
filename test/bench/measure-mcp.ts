// The paired figure of the MCP gateway: on one gateway process, a proxied tools/call (POST /mcp/bench-tools, a paid
// tool: key check, access, RPM, a hold and a settle, one usage event) beside a model call (POST
// /v1/chat/completions, the same money steps), each next to its upstream called directly, in the same run. One at a
// time (what a call adds), then saturated over 32 connections (throughput and the gateway's CPU per call).
import { Client, saturate, serial, stats, type Call, type Stats } from './load.ts';
import type { Durations } from './measure.ts';
import { CONNECTIONS } from './measure.ts';
import { cpuSeconds, type Proc } from './procs.ts';
import { CHAT_PATH, type Subject } from './subjects.ts';

export interface McpRow {
  what: string;
  serial: Stats;
  /** p50 one at a time minus its upstream's direct p50 (ms); null for the direct rows. */
  addedP50: number | null;
  rps: number;
  satP50: number;
  /** The gateway's CPU per call at saturation (µs); null for the direct rows (the upstream is not counted). */
  cpuUs: number | null;
  errors: number;
}

const CHAT = JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Say something short.' }], max_tokens: 64 });
const TOOL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'lookup', arguments: { q: 'something short' } } });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

async function check(c: Client, expect: string, what: string): Promise<void> {
  const r = await c.text();
  if (r.status !== 200 || !r.body.includes(expect)) throw new Error(`${what} answered ${r.status} to the bench's call: ${r.body.slice(0, 500)}`);
}

async function one(what: string, call: Call, expect: string, d: Durations, gateway: Proc | null): Promise<Omit<McpRow, 'addedP50'>> {
  const c = new Client(call, 1);
  try {
    await check(c, expect, what);
    await saturate(call, CONNECTIONS, d.warmMs);
    const ser = await serial(c, d.serialMs);
    const cpu0 = gateway ? cpuSeconds(gateway.pid) : 0;
    const sat = await saturate(call, CONNECTIONS, d.satMs);
    const cpu = gateway ? cpuSeconds(gateway.pid) - cpu0 : 0;
    const done = sat.latency.count;
    return {
      what,
      serial: stats(ser.total),
      rps: sat.rps,
      satP50: sat.latency.p50,
      cpuUs: gateway && done > 0 ? (cpu / done) * 1e6 : null,
      errors: ser.errors + sat.errors,
    };
  } finally {
    await c.close();
  }
}

export async function measureMcp(s: Subject & { mcp: Proc }, up: Proc, d: Durations): Promise<McpRow[]> {
  const gw = s.procs[0] as Proc;
  const url = s.urls[0] as string;
  const chat = (base: string, headers: Record<string, string>): Call => ({
    urls: [base],
    path: CHAT_PATH,
    headers: { ...headers, 'content-type': 'application/json' },
    body: CHAT,
  });
  const tool = (base: string, path: string, headers: Record<string, string>): Call => ({
    urls: [base],
    path,
    headers: { ...headers, ...MCP_HEADERS },
    body: TOOL,
  });
  const directChat = await one('model call, upstream direct', chat(`http://127.0.0.1:${up.port}`, { authorization: 'Bearer sk-bench' }), '"choices"', d, null);
  const viaChat = await one('model call through the gateway', chat(url, s.headers), '"choices"', d, gw);
  const directTool = await one('tools/call, MCP server direct', tool(`http://127.0.0.1:${s.mcp.port}`, '/mcp', {}), '"content"', d, null);
  const viaTool = await one('tools/call through the gateway', tool(url, '/mcp/bench-tools', s.headers), '"content"', d, gw);
  return [
    { ...directChat, addedP50: null },
    { ...viaChat, addedP50: viaChat.serial.p50 - directChat.serial.p50 },
    { ...directTool, addedP50: null },
    { ...viaTool, addedP50: viaTool.serial.p50 - directTool.serial.p50 },
  ];
}

const ms = (x: number): string => x.toFixed(2);

export function mcpReport(rows: readonly McpRow[]): string {
  const lines = [
    '### MCP: a proxied tools/call beside a model call (one gateway process, in-memory store, paid tool and model)',
    '',
    '| call | p50 / p99 one at a time (ms) | added p50 (ms) | req/s (saturated, 32 conns) | p50 saturated (ms) | gateway CPU per call (µs) | errors |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.what} | ${ms(r.serial.p50)} / ${ms(r.serial.p99)} | ${r.addedP50 === null ? '—' : ms(r.addedP50)} | ${Math.round(r.rps).toLocaleString('en-US')} | ${ms(r.satP50)} | ${r.cpuUs === null ? '—' : Math.round(r.cpuUs)} | ${r.errors} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
