// Where a process listens when HOST is not set: the loopback interface only. `npm start` prints its keys and the
// console's admin token to the terminal, and the metrics port lists every account's balance: on a laptop on a shared
// network none of it may be reachable by default. In a container the network is the pod's: the image sets
// HOST=0.0.0.0 (Dockerfile) and so does the chart on every container that listens.
export const DEFAULT_HOST = '127.0.0.1';

/** HOST, else 127.0.0.1 (an empty HOST counts as unset). */
export function listenHost(env: Record<string, string | undefined>): string {
  return env.HOST || DEFAULT_HOST;
}
