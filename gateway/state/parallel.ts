// Runs `work` on every item, at most `limit` at once: enough to hide the round trip to Redis when thousands of
// independent writes are due (a publish of every key record, a rebuild of every account), few enough not to crowd out
// the request path on the same connection.
export async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Writes in flight when a publish or a rebuild writes many accounts or keys. */
export const PUBLISH_PARALLEL = 32;
