// Cluster mode's config: the snapshot the operator published to Redis (gateway/contract/config-channel.ts), held in
// memory and swapped in one assignment when a new version is announced (pub/sub) or found by the periodic poll.
// Requests never wait on Redis for config; until the first snapshot arrives the gateway is not ready.
import type { RedisClient as Redis } from '../state/redis-connect.ts';
import { configKeys, decodeSnapshot, readCurrentVersion, readSnapshot, type Decoded } from '../contract/config-channel.ts';
import { unsealSnapshot, type Keyring } from '../contract/sealed-credentials.ts';
import type { Snapshot } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import type { ConfigSource } from '../pipeline/context.ts';

export interface RedisConfigSourceOptions {
  /** Client for GETs (may be shared with the store). */
  redis: Redis;
  /** A dedicated connection: a subscribed ioredis client can run nothing else. */
  subscriber: Redis;
  prefix: string;
  /** Unseals the upstream credentials of each snapshot (SVC_CONFIG_KEY or the pepper); null: none are expected sealed. */
  keyring?: Keyring | null;
  /** Poll interval, so a missed announcement heals (default 3000 ms). */
  pollMs?: number;
  log: { info(msg: string): void; warn(msg: string): void };
}

export class RedisConfigSource implements ConfigSource {
  private snapshot: Snapshot | null = null;
  private readonly opts: RedisConfigSourceOptions;
  private timer: NodeJS.Timeout | undefined;
  /** Versions this build cannot read (unknown schema): not read again at every poll. */
  private readonly refused = new Set<string>();
  /** Versions already warned about, so a poll every few seconds does not flood the log. */
  private readonly warned = new Set<string>();
  private running: Promise<void> | null = null;
  private again = false;

  constructor(opts: RedisConfigSourceOptions) {
    this.opts = opts;
  }

  current(): Snapshot {
    if (!this.snapshot) {
      throw new GatewayError('store_unavailable', 'The gateway has not received its configuration yet; retry shortly.', { retryAfterSec: 2 });
    }
    return this.snapshot;
  }

  ready(): boolean {
    return this.snapshot !== null;
  }

  version(): string | null {
    return this.snapshot?.version ?? null;
  }

  /** Subscribes, loads what is there, and starts polling. Resolves even if Redis holds no config yet. */
  async start(): Promise<void> {
    const { subscriber, prefix } = this.opts;
    const channel = configKeys(prefix).channel;
    subscriber.on('message', (ch: string, version: string) => {
      if (ch === channel && version !== this.snapshot?.version) this.refresh();
    });
    // Subscribing while ioredis still runs its ready check (INFO) breaks the connection for good: wait for ready.
    if (subscriber.status === 'wait') await subscriber.connect();
    else if (subscriber.status !== 'ready') await new Promise((r) => subscriber.once('ready', r));
    await subscriber.subscribe(channel);
    this.refresh();
    await this.running;
    this.timer = setInterval(() => this.refresh(), this.opts.pollMs ?? 3000);
    this.timer.unref();
  }

  /** Re-reads `current`; overlapping calls collapse into one more run after the one in flight. */
  refresh(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.load()
      .catch((err: unknown) => this.opts.log.warn(`Could not read the config from Redis; serving version ${this.version() ?? '(none)'}: ${String(err)}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.refresh();
        }
      });
  }

  private async load(): Promise<void> {
    const { redis, prefix, log } = this.opts;
    const version = await readCurrentVersion(redis, prefix);
    if (version === null || version === this.snapshot?.version || this.refused.has(version)) return;
    const raw = await readSnapshot(redis, prefix, version);
    // A missing snapshot may be written again (Redis restarted, the operator republishes): looked for again next time.
    const decoded = raw === null ? { ok: false as const, reason: 'its snapshot is missing' } : this.unseal(decodeSnapshot(raw, version));
    if (!decoded.ok) {
      // A snapshot this build cannot read is not read again; one sealed with a key we lack may be republished.
      if (raw !== null && !('sealed' in decoded)) this.refused.add(version);
      if (!this.warned.has(version)) log.warn(`Ignored config version ${version}: ${decoded.reason}; kept serving version ${this.version() ?? '(none)'}`);
      this.warned.add(version);
      return;
    }
    const previous = this.version();
    this.snapshot = decoded.snapshot;
    log.info(`Loaded config version ${version}${previous ? ` (was ${previous})` : ''}`);
  }

  private unseal(d: Decoded): Decoded | { ok: false; reason: string; sealed: true } {
    if (!d.ok) return d;
    try {
      return { ok: true, snapshot: unsealSnapshot(d.snapshot, this.opts.keyring ?? null) };
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err), sealed: true };
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    this.opts.subscriber.disconnect();
  }
}
