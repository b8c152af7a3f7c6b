// Turns stream entries into what one Postgres transaction writes: rows for the events that read well, dead
// letters for the rest (and for entries delivered too many times: they keep killing their exporter).
import { decodeEntry, entryEvents } from '../event-schema.ts';
import type { DeadLetter, Row } from '../postgres/writer.ts';
import type { Entry } from './redis-replies.ts';

export interface Batch {
  entries: Entry[];
  rows: Row[];
  dead: DeadLetter[];
}

export function toBatch(entries: Entry[], overDelivered: ReadonlySet<string> = new Set(), deliveries?: ReadonlyMap<string, number>): Batch {
  const rows: Row[] = [];
  const dead: DeadLetter[] = [];
  for (const e of entries) {
    const payload = JSON.stringify(e.fields);
    if (overDelivered.has(e.id)) {
      dead.push({
        source: e.stream,
        entryId: e.id,
        eventId: null,
        reason: 'too_many_deliveries',
        detail: `delivered ${deliveries?.get(e.id) ?? '?'} times without being committed`,
        payload,
      });
      continue;
    }
    // An entry of several events (a lease's flush): a bad one is parked under `<entry id>/<its index>`.
    const all = decodeEntry(e.fields);
    all.forEach((d, i) => {
      const entryId = all.length > 1 ? `${e.id}/${i}` : e.id;
      if (d.ok) rows.push({ source: e.stream, entryId, event: d.event });
      else dead.push({ source: e.stream, entryId, eventId: eventIdOf(e.fields, all.length > 1 ? i : null), reason: d.reason, detail: d.detail, payload });
    });
  }
  return { entries, rows, dead };
}

/** The event id of an entry that did not validate, when one can be read from it (for people tracing it). */
function eventIdOf(fields: readonly string[], index: number | null): string | null {
  if (index !== null) {
    const e = entryEvents(fields)[index] as { eventId?: unknown } | undefined;
    return typeof e?.eventId === 'string' ? e.eventId.slice(0, 64) : null;
  }
  const i = fields.indexOf('event');
  const m = i >= 0 && i % 2 === 0 ? /"eventId"\s*:\s*"([^"]{1,64})"/.exec(fields[i + 1] ?? '') : null;
  return m?.[1] ?? null;
}

/** Splits a read larger than one batch into batches of at most `size` entries. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
