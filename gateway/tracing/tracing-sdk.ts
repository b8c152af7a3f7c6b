// What a process holds of its tracing SDK (sdk.ts builds it, start.ts loads sdk.ts only when tracing is on).
import type { McpTracer } from '../mcp/trace.ts';
import type { CallTracer } from '../pipeline/context.ts';
import type { SpanCounts } from './bounded.ts';

export interface TracingSdk {
  /** Starts each call's trace (call-trace.ts). */
  calls: CallTracer;
  /** Starts each MCP request's span (mcp-trace.ts). */
  mcp: McpTracer;
  /** What became of the sampled spans (svc_gateway_trace_spans_total). */
  counts: SpanCounts;
  /** Exports what is queued and stops (at shutdown, after the calls in flight). */
  shutdown(): Promise<void>;
}
