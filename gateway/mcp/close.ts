// Ending a session's upstream sessions (DELETE to each server that gave one an id), for the idle sweep.
import { entryOf, type Snapshot } from '../contract/snapshot.ts';
import type { McpSession } from './session-id.ts';
import { callUpstream } from './upstream.ts';

export function closeUpstreams(current: () => Snapshot): (session: McpSession) => Promise<void> {
  return async (session) => {
    const servers = current().mcpServers ?? {};
    await Promise.all(
      Object.entries(session.servers).map(async ([name, u]) => {
        const server = entryOf(servers, name);
        if (!server || u.id === null) return;
        const up = await callUpstream(server, { method: 'DELETE', sessionId: u.id, protocolVersion: u.version }, AbortSignal.timeout(server.timeouts.totalMs));
        up.body.resume();
      }),
    );
  };
}
