// The aggregate: compiles every object of the namespace into one snapshot plus key records (the same pure compile
// the standalone gateway runs) and publishes them: key records, revocations and credits through the
// operator's narrow state port (gateway/state/operator-state.ts), then
// the snapshot through the config channel (content-addressed, `current` moved last, announced on pub/sub).
// What the compiler could not serve (a target without its credentials, a key without its account) is in its
// verdicts, which the other controllers render into each object's status.
import { createHash } from 'node:crypto';
import type { Outcome } from '../queue/work-queue.ts';
import type { ControllerContext, Reconciler } from './context.ts';
import { compiled, forgetCompiled } from './compiled.ts';

export const CONFIG_KEY = 'config';

export interface Published {
  version: string;
  keys: number;
}

export class ConfigController implements Reconciler {
  readonly kind = 'Config' as const;
  private readonly ctx: ControllerContext;
  private readonly onPublished: (p: Published) => void;
  /** Digest of what this process last published; an identical compile writes nothing (forget() forces a rewrite). */
  private lastDigest: string | null = null;
  /**
   * No publish before this time: each waits as long as the last one took. While tens of thousands of keys stream in
   * (a resync), back-to-back publishes of every key record would take the CPU the keys' own reconciles (and the API
   * server beside) need; a small config publishes in milliseconds and waits as little.
   */
  private nextAt = 0;

  constructor(ctx: ControllerContext, onPublished: (p: Published) => void) {
    this.ctx = ctx;
    this.onPublished = onPublished;
  }

  /** Makes the next reconcile publish even if nothing changed (periodic resync: heals a flushed Redis). */
  forget(): void {
    this.lastDigest = null;
    forgetCompiled(this.ctx.caches);
  }

  async reconcile(): Promise<Outcome | void> {
    const wait = this.nextAt - Date.now();
    if (wait > 0) return { requeueAfterMs: wait };
    const t0 = Date.now();
    if (await this.publish()) this.nextAt = 2 * Date.now() - t0;
  }

  /** Publishes what the caches compile to, unless this process published exactly that last; returns whether it wrote. */
  private async publish(): Promise<boolean> {
    const { ctx } = this;
    const { snapshot, keys, problems } = compiled(ctx);
    // The compile's output is in a fixed order (objects by name, fields as the compiler writes them): plain JSON
    // tells a change as well as canonical JSON does, at a fraction of the cost with 10,000 key records.
    const digest = createHash('sha256')
      .update(JSON.stringify({ version: snapshot.version, keys }))
      .digest('hex');
    if (digest === this.lastDigest && (await ctx.store.currentVersion()) === snapshot.version) return false;
    await ctx.store.publish(snapshot, keys);
    this.lastDigest = digest;
    ctx.log.info('Published config', {
      version: snapshot.version,
      models: Object.keys(snapshot.models).length,
      accounts: Object.keys(snapshot.accounts).length,
      keys: keys.length,
      problems: problems.length,
    });
    for (const p of problems) ctx.log.debug('Compiled with a problem', { object: p.object, field: p.field, problem: p.message });
    this.onPublished({ version: snapshot.version, keys: keys.length });
    return true;
  }
}
