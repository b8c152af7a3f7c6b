// McpServer: Ready renders the compiler's verdict (served, or why not: a missing Secret, a prefix another server
// already uses).
import type { ControllerContext, Reconciler } from './context.ts';
import { compiledObjects } from './compiled.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

export class McpServerController implements Reconciler {
  readonly kind = 'McpServer' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const obj = this.ctx.caches.McpServer.get(name);
    if (!obj) return;
    const parsed = parseCr('McpServer', obj);
    const verdict = parsed.ok ? compiledObjects(this.ctx).verdicts.mcpServers[name] : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    if (verdict) await writeStatus(this.ctx, 'McpServer', obj, { ready: verdict.ready, reason: verdict.reason, message: verdict.message });
  }
}
