// ModelRoute: every Secret a target names must hold its key, every fallback must be a known model, and no other
// route may publish the same model id.
import type { ModelRoute } from '../../crds/schema/index.ts';
import type { Verdict } from './conditions.ts';
import type { ControllerContext, Reconciler } from './context.ts';
import { parseCr } from './parse.ts';
import { writeStatus } from './status.ts';

export class ModelRouteController implements Reconciler {
  readonly kind = 'ModelRoute' as const;
  private readonly ctx: ControllerContext;

  constructor(ctx: ControllerContext) {
    this.ctx = ctx;
  }

  async reconcile(name: string): Promise<void> {
    const obj = this.ctx.caches.ModelRoute.get(name);
    if (!obj) return;
    const parsed = parseCr('ModelRoute', obj);
    const verdict = parsed.ok ? this.judge(parsed.value) : { ready: false, reason: 'InvalidSpec', message: parsed.message };
    await writeStatus(this.ctx, 'ModelRoute', obj, verdict);
  }

  private judge(route: ModelRoute): Verdict {
    const { caches, clients } = this.ctx;
    for (const t of route.spec.targets) {
      const ref = t.credentials?.secretKeyRef;
      if (!ref) continue;
      const s = caches.Secret.get(ref.name);
      if (!s) return { ready: false, reason: 'MissingSecret', message: `Target ${t.name}: Secret ${ref.name} does not exist in namespace ${clients.namespace}.` };
      if (s.data?.[ref.key] === undefined) return { ready: false, reason: 'MissingSecretKey', message: `Target ${t.name}: Secret ${ref.name} has no key ${ref.key}.` };
    }
    // Sorted by name as the compiler reads them: of two routes with one model id, the last one serves it.
    const models = new Map<string, string>();
    const byName = [...caches.ModelRoute.list()].map((o) => [o.metadata?.name ?? '', o] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [, o] of byName) {
      const p = parseCr('ModelRoute', o);
      if (p.ok) models.set(p.value.spec.model ?? p.value.metadata.name, p.value.metadata.name);
    }
    const id = route.spec.model ?? route.metadata.name;
    const owner = models.get(id);
    if (owner !== undefined && owner !== route.metadata.name) {
      return { ready: false, reason: 'DuplicateModel', message: `ModelRoute ${owner} publishes model ${id} in its place.` };
    }
    const unknown = route.spec.fallbacks.filter((f) => !models.has(f));
    if (unknown.length > 0) return { ready: false, reason: 'UnknownFallback', message: `No ModelRoute publishes fallback model ${unknown.join(', ')}.` };
    return { ready: true, reason: 'Accepted', message: `Model ${id} is published to the gateways with ${route.spec.targets.length} target(s).` };
  }
}
