// The one bounded wait of the suite: polls a condition (sync or async) until it holds, or fails saying what it
// waited for and how long. Every loop in a test ends by itself.

export async function until(cond: () => boolean | Promise<boolean>, ms = 5000, what = 'condition', everyMs = 10): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
