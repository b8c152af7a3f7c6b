// The standard Node.js process metrics of every process that serves /metrics (gateway, usage exporter, operator):
// prom-client's default metrics under their standard names (process_cpu_seconds_total, process_resident_memory_bytes,
// nodejs_heap_size_used_bytes, nodejs_eventloop_lag_seconds, ...), which the usual Node.js dashboards and alerts read.
// No prefix: a process is told apart by its job/pod labels, as for any other service. Three prom-client gauges end in
// _total (nodejs_active_{handles,requests,resources}_total), which `promtool check metrics` flags (a _total is a
// counter): they are left out, their per-type gauges (nodejs_active_handles{type}, ...) sum to the same number.
import { collectDefaultMetrics, type Registry } from 'prom-client';

export const GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
}
