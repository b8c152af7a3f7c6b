// Metrics of MCP tool calls, from their usage events: calls by McpServer, tool and outcome, and their latency by
// McpServer and outcome. Labels stay bounded: the server is configured; a tool gets a label of its own only once its
// server has answered a call of it (a client cannot mint series by calling made-up names), at most MAX_TOOLS per
// server, the rest `_other`. Outcomes: ok, tool_error (isError or a JSON-RPC error from the tool), upstream_error
// (the server failed, timed out, or the client left first), refused (RPM, budget, balance, a revoked key).
import { Counter, Histogram, type Registry } from 'prom-client';
import { FastHistogram } from './fast-metrics.ts';
import type { UsageEvent } from '../usage/event.ts';
import { observe, type Exemplar } from './exemplars.ts';

/** Tools with a label of their own, per McpServer. */
export const MAX_TOOLS = 100;
export const OTHER_TOOL = '_other';
const DURATION = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export type ToolOutcome = 'ok' | 'tool_error' | 'upstream_error' | 'refused';

export function outcomeOf(e: UsageEvent): ToolOutcome {
  if (e.errorCode === null) return 'ok';
  if (e.errorCode === 'tool_error' || e.errorCode === 'upstream_error') return e.errorCode;
  return 'refused';
}

export class McpMetrics {
  private readonly calls: Counter;
  private readonly duration: Histogram;
  private readonly tools = new Map<string, Set<string>>();

  constructor(registry: Registry, enableExemplars = false) {
    const registers = [registry];
    this.calls = new Counter({
      name: 'svc_gateway_mcp_tool_calls_total',
      help: 'MCP tools/call requests by McpServer, tool and outcome (ok, tool_error, upstream_error, refused).',
      labelNames: ['server', 'tool', 'outcome'],
      registers,
    });
    this.duration = new FastHistogram({
      name: 'svc_gateway_mcp_tool_call_duration_seconds',
      help: 'Duration of MCP tools/call requests in the gateway, to the end of the answer, by McpServer and outcome.',
      labelNames: ['server', 'outcome'],
      buckets: DURATION,
      registers,
      enableExemplars,
    });
  }

  /** The tool's label: its name once its server answered a call of it (and while under MAX_TOOLS), else `_other`. */
  private toolLabel(server: string, tool: string, answered: boolean): string {
    let known = this.tools.get(server);
    if (!known) this.tools.set(server, (known = new Set()));
    if (known.has(tool)) return tool;
    if (answered && known.size < MAX_TOOLS) {
      known.add(tool);
      return tool;
    }
    return OTHER_TOOL;
  }

  observe(e: UsageEvent, ex: Exemplar): void {
    const server = e.upstream ?? '';
    const outcome = outcomeOf(e);
    const tool = e.requestedModel.slice(e.requestedModel.indexOf('/') + 1);
    this.calls.inc({ server, tool: this.toolLabel(server, tool, outcome === 'ok'), outcome });
    observe(this.duration, { server, outcome }, e.latencyMs / 1000, ex);
  }
}
