// Preloaded into a gateway process (NODE_OPTIONS=--import=<this file>) to give it a wrong clock, as a replica whose
// clock stepped: Date.now is off by SVC_TEST_CLOCK_SKEW_MS. Test use only (test/gateway/key-expiry-fleet.test.ts).
const skew = Number(process.env.SVC_TEST_CLOCK_SKEW_MS ?? '0');
const real = Date.now.bind(Date);
Date.now = (): number => real() + skew;

/** The environment that starts a process with its clock `ms` off. */
export function skewedClockEnv(ms: number): Record<string, string> {
  return { NODE_OPTIONS: `--import=${new URL(import.meta.url).pathname}`, SVC_TEST_CLOCK_SKEW_MS: String(ms) };
}
