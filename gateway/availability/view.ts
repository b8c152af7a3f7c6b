// Everything the public status page and its JSON show, assembled once per request from the snapshot (which models
// and McpServers: `mcp:<name>`, type mcp, one target), the board (current states) and the history (bars, uptime,
// incidents). Same for every console process.
import type { CompiledModel, Snapshot } from '../contract/snapshot.ts';
import type { Board } from './board.ts';
import type { History } from './history.ts';
import { inMaintenance } from './monitor.ts';
import { modelState } from './states.ts';
import { dailyBars, DAY_MS, uptimeWindows, type DayBar, type Windows } from './uptime.ts';
import { mcpSubject, type Incident, type State, type TargetStatus } from './types.ts';

export interface ModelView {
  id: string;
  /** What the model serves, or mcp: an McpServer (id `mcp:<name>`, its one target the server's name). */
  type: CompiledModel['type'] | 'mcp';
  state: State;
  targets: TargetStatus[];
  lastProbe: number | null;
  latencyMs: number | null;
  bars: DayBar[];
  windows: Windows;
}

export interface StatusView {
  asOf: number;
  intervalSeconds: number;
  models: ModelView[];
  /** Open first (newest first), then the resolved ones of the last 90 days; scheduled maintenances apart. */
  incidents: Incident[];
  maintenances: Incident[];
}

export interface StatusSource {
  view(): Promise<StatusView>;
  /** The running config (for /trust). */
  snapshot(): Snapshot;
}

export interface StatusSourceOptions {
  snapshot: () => Snapshot;
  board: Board;
  history: History;
  intervalSeconds: number;
  declared?: () => readonly Incident[];
  now?: () => number;
}

export function statusSource(o: StatusSourceOptions): StatusSource {
  const now = o.now ?? Date.now;
  return {
    snapshot: o.snapshot,
    async view() {
      const at = now();
      const snap = o.snapshot();
      const declared = o.declared?.() ?? [];
      const [states, recorded] = await Promise.all([o.board.states(), o.history.incidents(at - 90 * DAY_MS)]);
      const subjects: Array<{ id: string; type: ModelView['type']; targets: string[] }> = [
        ...Object.values(snap.models)
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .map((m) => ({ id: m.id, type: m.type, targets: m.targets.map((t) => t.name) })),
        ...Object.keys(snap.mcpServers ?? {})
          .sort()
          .map((name) => ({ id: mcpSubject(name), type: 'mcp' as const, targets: [name] })),
      ];
      const models = await Promise.all(
        subjects.map(async (m): Promise<ModelView> => {
          const targets = m.targets.map(
            (t) =>
              states.find((s) => s.model === m.id && s.target === t) ?? {
                model: m.id,
                target: t,
                state: 'operational' as State,
                lastProbe: null,
                latencyMs: null,
                message: 'not probed yet',
              },
          );
          const segments = await o.history.segments(m.id, at - 90 * DAY_MS);
          const probed = targets.filter((t) => t.lastProbe !== null);
          const newest = probed.sort((a, b) => (b.lastProbe ?? 0) - (a.lastProbe ?? 0))[0];
          return {
            id: m.id,
            type: m.type,
            state: modelState(
              targets.map((t) => t.state),
              inMaintenance(declared, m.id, at),
            ),
            targets,
            lastProbe: newest?.lastProbe ?? null,
            latencyMs: newest ? Math.min(...probed.filter((t) => t.state !== 'major_outage').map((t) => t.latencyMs ?? Infinity), Infinity) : null,
            bars: dailyBars(segments, at),
            windows: uptimeWindows(segments, at),
          };
        }),
      );
      for (const mv of models) {
        if (mv.latencyMs === Infinity) mv.latencyMs = null;
        // A person's open incident says the state; probes do not overwrite it.
        const said = declared.find((i) => i.state && i.status !== 'resolved' && i.scheduled === null && i.models.includes(mv.id));
        if (said?.state && mv.state !== 'under_maintenance') mv.state = said.state;
      }
      const all = [...recorded, ...declared.filter((i) => i.scheduled === null)];
      const open = all.filter((i) => i.status !== 'resolved').sort((a, b) => b.createdAt - a.createdAt);
      const closed = all.filter((i) => i.status === 'resolved').sort((a, b) => b.createdAt - a.createdAt);
      return {
        asOf: at,
        intervalSeconds: o.intervalSeconds,
        models,
        incidents: [...open, ...closed],
        maintenances: declared.filter((i) => i.scheduled !== null),
      };
    },
  };
}
