// Warnings from the request path, thinned: an outage must not flood the log.
/** At most one warning a second: an outage must not flood the log. */
export function rateLimitedWarn(sink: (message: string, err?: unknown) => void): (message: string, err?: unknown) => void {
  let last = 0;
  let skipped = 0;
  return (message, err) => {
    const now = Date.now();
    if (now - last < 1000) {
      skipped++;
      return;
    }
    last = now;
    sink(skipped > 0 ? `${message} (${skipped} similar warnings skipped)` : message, err);
    skipped = 0;
  };
}
