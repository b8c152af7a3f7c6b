// The logger the usage pipeline writes to: pino's shape (fastify's logger fits), or JSON lines on stderr.
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

function line(level: string, obj: object, msg: string): void {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = v instanceof Error ? { message: v.message, code: (v as { code?: unknown }).code } : v;
  process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
}

export function jsonLog(level: 'info' | 'warn' | 'error' = 'info'): Log {
  const rank = { info: 0, warn: 1, error: 2 };
  const on = (l: keyof typeof rank): boolean => rank[l] >= rank[level];
  return {
    info: (o, m) => on('info') && line('info', o, m),
    warn: (o, m) => on('warn') && line('warn', o, m),
    error: (o, m) => on('error') && line('error', o, m),
  };
}

/** At most one line per `everyMs` for a repeated failure (an outage must not flood the log). */
export function throttled(log: Log, everyMs = 5_000): Log['warn'] {
  let last = 0;
  let skipped = 0;
  return (obj, msg) => {
    const now = Date.now();
    if (now - last < everyMs) {
      skipped++;
      return;
    }
    last = now;
    log.warn(skipped > 0 ? { ...obj, skipped } : obj, msg);
    skipped = 0;
  };
}

/** A log usable before the real one exists (the gateway's comes with its server): JSON lines until attached. */
export function forwardingLog(): Log & { attach(target: Log): void } {
  let target: Log = jsonLog();
  return {
    info: (o, m) => target.info(o, m),
    warn: (o, m) => target.warn(o, m),
    error: (o, m) => target.error(o, m),
    attach: (t) => {
      target = t;
    },
  };
}
