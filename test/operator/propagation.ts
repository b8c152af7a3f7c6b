// Measuring propagation as users see it: the time until every gateway process gives the expected answer.

/** Polls `probe` on every URL until each has passed once; returns the time (ms since epoch) the last one passed. */
export async function untilAll(urls: string[], probe: (url: string) => Promise<boolean>, timeoutMs = 30_000, everyMs = 10): Promise<number> {
  const end = Date.now() + timeoutMs;
  const times = await Promise.all(
    urls.map(async (url) => {
      while (Date.now() < end) {
        if (await probe(url).catch(() => false)) return Date.now();
        await new Promise((r) => setTimeout(r, everyMs));
      }
      throw new Error(`${url} did not pass within ${timeoutMs} ms`);
    }),
  );
  return Math.max(...times);
}

export interface Summary {
  runs: number;
  p50: number;
  max: number;
}

export function summarize(ms: number[]): Summary {
  const sorted = [...ms].sort((a, b) => a - b);
  const mid = Math.floor((sorted.length - 1) / 2);
  return {
    runs: sorted.length,
    p50: sorted.length % 2 ? (sorted[mid] as number) : Math.round(((sorted[mid] as number) + (sorted[mid + 1] as number)) / 2),
    max: sorted.at(-1) ?? 0,
  };
}
