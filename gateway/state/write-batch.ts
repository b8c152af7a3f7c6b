// One socket write per event-loop turn for the Redis commands of the request path. Under load many calls admit and
// settle in the same turn; each command used to cost its own write syscall (the largest single cost in the
// gateway's CPU profile). The first command of a turn corks the connection's socket; the check phase of the same
// turn uncorks it, so the commands leave together, in order, before the loop waits for I/O again. One call at a
// time waits no longer: nothing else runs between the command and the uncork.
import type { RedisClient } from './redis-connect.ts';

export class WriteBatch {
  private readonly redis: RedisClient;
  private corked = false;
  private readonly flush: () => void;
  private socket: { uncork(): void } | null = null;

  constructor(redis: RedisClient) {
    this.redis = redis;
    this.flush = (): void => {
      this.corked = false;
      const s = this.socket;
      this.socket = null;
      s?.uncork();
    };
  }

  /** Call before sending a command: it leaves with the others of this turn. */
  join(): void {
    if (this.corked) return;
    // A Cluster has a connection per node and no single stream: nothing to cork.
    const s = (this.redis as { stream?: unknown }).stream as { cork?: () => void; uncork(): void; writable?: boolean } | undefined;
    if (!s?.cork || !s.writable) return;
    s.cork();
    this.socket = s;
    this.corked = true;
    setImmediate(this.flush);
  }
}
