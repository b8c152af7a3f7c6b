// Connection reuse for the Kubernetes API. @kubernetes/client-node 2.x builds a new undici Agent for every request
// (KubeConfig.applySecurityAuthentication calls createDispatcher each time), so every API call opened a new TCP
// connection and made a TLS handshake: most of the operator's CPU during a resync of many objects. One dispatcher
// per set of TLS options is reused here; options that change (a rotated client certificate) get a new one, and the
// old one is closed once its requests have finished.
import type { Cluster, KubeConfig } from '@kubernetes/client-node';

type AgentOptions = Record<string, unknown>;
/** An undici dispatcher, as far as this file needs one. */
interface Dispatcher {
  close(): Promise<void>;
}
type MakeDispatcher = (cluster: Cluster | null, agentOptions: AgentOptions) => Dispatcher | undefined;

/** What identifies a dispatcher: the endpoint, the proxy, and the TLS material (Buffers or strings). */
function keyOf(cluster: Cluster | null, opts: AgentOptions): string {
  const part = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('base64') : v === undefined ? '' : String(v));
  const tls = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'].map((k) => part(opts[k]));
  return [cluster?.server ?? '', cluster?.proxyUrl ?? '', ...tls].join('\u0000');
}

/** Makes `kc` reuse one dispatcher (and so its open connections) across requests. Returns `kc`. */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  const target = kc as unknown as { createDispatcher?: MakeDispatcher };
  // A client-node without this method (a later version that pools connections itself) is left as it is.
  if (typeof target.createDispatcher !== 'function') return kc;
  const make = target.createDispatcher.bind(kc);
  let cached: { key: string; dispatcher: Dispatcher | undefined } | null = null;
  target.createDispatcher = (cluster, opts) => {
    const key = keyOf(cluster, opts);
    if (cached?.key === key) return cached.dispatcher;
    void cached?.dispatcher?.close().catch(() => undefined);
    cached = { key, dispatcher: make(cluster, opts) };
    return cached.dispatcher;
  };
  return kc;
}
