// Mounts the public pages (/status, its JSON and badges, /trust, /.well-known/security.txt) on a fastify server: the standalone process's API server, or
// the console process in a cluster.
import type { FastifyInstance } from 'fastify';
import type { StatusSource } from '../../gateway/availability/view.ts';
import { statusPlugin } from '../server/status-routes.ts';

export async function mountStatusPages(app: FastifyInstance, o: { source: StatusSource; env: Record<string, string | undefined> }): Promise<void> {
  const name = o.env.SVC_STATUS_PAGE_NAME || 'svc-gateway';
  const url = o.env.SVC_PUBLIC_URL ? `${o.env.SVC_PUBLIC_URL.replace(/\/+$/, '')}/status` : '/status';
  await app.register(statusPlugin({ source: o.source, page: { id: 'svc-gateway', name, url }, env: o.env }));
}
