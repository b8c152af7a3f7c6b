// The process's logger, made before the server so start-up (Redis, config, the console) logs the way requests do:
// JSON lines, the same redaction of credentials everywhere. Written to stdout without blocking the event loop; a
// shutdown ends it with endLogs() before the process exits.
import { pino, symbols, type Logger } from 'pino';

export const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.apiKey',
  '*.credential',
  '*.pepper',
];

/** How long a shutdown waits for the last log lines to be written before it exits without them. */
export const LOG_FLUSH_MS = 2000;

export function gatewayLogger(level: string): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } });
}

/** What endLogs needs of pino's destination (sonic-boom): end it, drop it, hear when it is done. */
interface Sink {
  end(): void;
  destroy(): void;
  once(event: 'close' | 'error', listener: () => void): unknown;
}

/**
 * The last step of a shutdown: writes what the logger still holds, within `ms`. Past that (stdout a pipe nobody reads,
 * or one already closed), what is left is dropped. Without it, pino's own flush at exit retries the write for as long
 * as it fails: a process whose stdout was a closed pipe never exited after SIGTERM. Resolves true when all was written.
 */
export async function endLogs(logger: Logger | object, ms = LOG_FLUSH_MS): Promise<boolean> {
  const sink = (logger as unknown as Record<symbol, Partial<Sink> | undefined>)[symbols.streamSym];
  if (!sink || typeof sink.end !== 'function' || typeof sink.destroy !== 'function' || typeof sink.once !== 'function') return true;
  const s = sink as Sink;
  let timer: NodeJS.Timeout | undefined;
  const written = await new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    s.once('close', () => resolve(true));
    // A broken pipe: nothing more can be written (pino turns the sink's methods into no-ops then).
    s.once('error', () => resolve(false));
    s.end();
  });
  clearTimeout(timer);
  if (!written) s.destroy();
  return written;
}
