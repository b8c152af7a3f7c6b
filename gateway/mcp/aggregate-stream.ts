// GET /mcp: one SSE stream that merges the streams every server of the session keeps for messages of its own
// (list-changed notifications, resource updates, log messages, its requests), each rewritten to /mcp's names
// (aggregate-names.ts). A server that offers no such stream (405) or fails to open one is left out; none: 405.
// Resuming: each event the client gets carries an id that holds, for every server, the id of the last event it
// sent (when its events have ids); Last-Event-ID sends each server its own, so each replays what the client missed.
import { serverMessage } from './aggregate-names.ts';
import type { McpAnswer } from './answer.ts';
import { refusalAnswer } from './calls.ts';
import type { McpContext } from './context.ts';
import { openSession, type Joined } from './joined.ts';
import { relay } from './relay.ts';
import { callUpstream } from './upstream.ts';

const ID_PREFIX = 'svcev1.';

/** The upstream event ids a Last-Event-ID of ours holds (none: not ours, or altered). */
export function lastIds(header: string | null): Record<string, string> {
  if (!header?.startsWith(ID_PREFIX) || header.length > 8192) return {};
  try {
    const v: unknown = JSON.parse(Buffer.from(header.slice(ID_PREFIX.length), 'base64url').toString('utf8'));
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
    return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

function eventId(last: Record<string, string>): string {
  return ID_PREFIX + Buffer.from(JSON.stringify(last)).toString('base64url');
}

interface Source {
  server: string;
  events: AsyncIterator<string>;
  destroy(): void;
}

async function openSource(ctx: McpContext, j: Joined, lastEventId: string | undefined): Promise<Source | null> {
  try {
    const up = await callUpstream(
      j.server,
      { method: 'GET', sessionId: j.id, protocolVersion: j.version, ...(lastEventId ? { lastEventId } : {}) },
      ctx.signal,
    );
    // undici errors a body destroyed unread (and one the client's leaving aborted), read or not: never unhandled.
    up.body.on('error', () => {});
    if (up.status !== 200 || !up.contentType.includes('text/event-stream')) {
      up.body.destroy();
      return null;
    }
    const a = await relay(up, null, j.server.name, { other: serverMessage(j.server) });
    if (a.kind !== 'stream') return null;
    return { server: j.server.name, events: a.events[Symbol.asyncIterator](), destroy: () => up.body.destroy() };
  } catch (err) {
    if (!ctx.signal.aborted)
      ctx.deps.log.warn({ server: j.server.name, error: err instanceof Error ? err.message : String(err) }, 'An McpServer failed its GET stream');
    return null;
  }
}

/** One event of a server's, its id (if it has one) replaced by the merged stream's. */
function restamp(event: string, server: string, last: Record<string, string>): string {
  const lines = event.replace(/\n+$/, '').split('\n');
  const id = lines.find((l) => l.startsWith('id:'));
  if (id === undefined) return event;
  last[server] = id.slice(id.startsWith('id: ') ? 4 : 3);
  return `${lines.map((l) => (l.startsWith('id:') ? `id: ${eventId(last)}` : l)).join('\n')}\n\n`;
}

async function* merge(sources: Source[], last: Record<string, string>): AsyncGenerator<string> {
  type Next = { i: number; r: IteratorResult<string> };
  const pending = new Map<number, Promise<Next>>();
  const pull = (i: number): void => {
    const s = sources[i] as Source;
    pending.set(
      i,
      s.events.next().then(
        (r) => ({ i, r }),
        () => ({ i, r: { done: true, value: undefined } }),
      ),
    );
  };
  sources.forEach((_, i) => pull(i));
  try {
    // Comment events keep proxies from closing a quiet stream; the client ignores them.
    yield ': svc-gateway merged stream\n\n';
    while (pending.size > 0) {
      const { i, r } = await Promise.race(pending.values());
      pending.delete(i);
      if (r.done) continue;
      pull(i);
      yield restamp(r.value, (sources[i] as Source).server, last);
    }
  } finally {
    for (const s of sources) s.destroy();
  }
}

export async function getAll(ctx: McpContext): Promise<McpAnswer> {
  try {
    const joined = await openSession(ctx);
    const last = lastIds(ctx.headers.lastEventId);
    const sources = (await Promise.all(joined.map((j) => openSource(ctx, j, last[j.server.name])))).filter((s): s is Source => s !== null);
    if (sources.length === 0) return { kind: 'status', status: 405, allow: 'POST, DELETE' };
    return { kind: 'stream', events: merge(sources, last) };
  } catch (err) {
    return refusalAnswer(null, err);
  }
}
