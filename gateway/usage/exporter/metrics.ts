// Prometheus metrics of the usage exporter. Labels are bounded: a stage, a dead-letter reason, an entry source;
// never an account, key, stream name or task.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { POISON_REASONS, type PoisonReason } from '../event-schema.ts';

export type Stage = 'discover' | 'read' | 'claim' | 'write' | 'ack' | 'trim' | 'credits';

export class ExporterMetrics {
  readonly rowsWritten: Counter;
  readonly duplicates: Counter;
  readonly entriesRead: Counter<'source'>;
  readonly acked: Counter;
  readonly batchSize: Histogram;
  readonly batchSeconds: Histogram;
  readonly errors: Counter<'stage'>;
  readonly deadLetters: Counter<'reason'>;
  readonly lost: Counter;
  readonly trimmed: Counter;
  readonly lag: Gauge;
  readonly pending: Gauge;
  readonly oldestSeconds: Gauge;
  readonly streams: Gauge;
  readonly lastCommit: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rowsWritten = new Counter({ name: 'svc_exporter_rows_written_total', help: 'Usage events newly written to usage_events.', registers });
    this.duplicates = new Counter({
      name: 'svc_exporter_duplicates_total',
      help: 'Entries whose event was already in Postgres (redelivered), skipped.',
      registers,
    });
    this.entriesRead = new Counter({
      name: 'svc_exporter_entries_read_total',
      help: 'Stream entries taken, new or claimed from a stale consumer.',
      labelNames: ['source'],
      registers,
    });
    this.acked = new Counter({ name: 'svc_exporter_acked_total', help: 'Stream entries acknowledged after their batch committed.', registers });
    this.batchSize = new Histogram({
      name: 'svc_exporter_batch_size',
      help: 'Entries per committed batch.',
      buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500],
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'svc_exporter_batch_duration_seconds',
      help: 'Time to commit and acknowledge one batch.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.errors = new Counter({ name: 'svc_exporter_errors_total', help: 'Failed exporter steps (retried), by stage.', labelNames: ['stage'], registers });
    this.deadLetters = new Counter({
      name: 'svc_exporter_dead_letters_total',
      help: 'Entries parked in usage_dead_letters, by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.lost = new Counter({
      name: 'svc_exporter_lost_entries_total',
      help: 'Pending entries deleted from the stream before they were exported (must stay 0).',
      registers,
    });
    this.trimmed = new Counter({ name: 'svc_exporter_trimmed_entries_total', help: 'Exported entries trimmed from the streams.', registers });
    this.lag = new Gauge({ name: 'svc_exporter_stream_lag_entries', help: 'Entries in the streams not yet delivered to any exporter.', registers });
    this.pending = new Gauge({ name: 'svc_exporter_pending_entries', help: 'Entries delivered and not yet acknowledged.', registers });
    this.oldestSeconds = new Gauge({
      name: 'svc_exporter_oldest_unexported_seconds',
      help: 'Age of the oldest entry not yet committed to Postgres (0 if none).',
      registers,
    });
    this.streams = new Gauge({ name: 'svc_exporter_streams', help: 'Usage streams being exported.', registers });
    this.lastCommit = new Gauge({ name: 'svc_exporter_last_commit_timestamp_seconds', help: 'When the last batch committed.', registers });
    // Zero series from the start, so rate() and alerts see them before the first increment.
    for (const reason of POISON_REASONS) this.deadLetters.inc({ reason }, 0);
    for (const stage of ['discover', 'read', 'claim', 'write', 'ack', 'trim', 'credits'] satisfies Stage[]) this.errors.inc({ stage }, 0);
    for (const source of ['new', 'claimed']) this.entriesRead.inc({ source }, 0);
  }

  parked(reasons: readonly PoisonReason[]): void {
    for (const reason of reasons) this.deadLetters.inc({ reason });
  }
}
