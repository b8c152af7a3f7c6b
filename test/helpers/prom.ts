// Reads Prometheus text exposition: the sum of a metric over its label sets (optionally filtered by labels).
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const set = m[2] ?? '';
    if (Object.entries(labels).some(([k, v]) => !set.includes(`${k}="${v}"`))) continue;
    sum += Number(m[3]);
  }
  return sum;
}

/** GET <url>/metrics, where url is a metrics port: the gateway's SVC_METRICS_PORT (GatewayProcess.metricsUrl, never its
 * API port, which answers 404 there), the exporter's or the operator's PORT. */
export async function scrape(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}
