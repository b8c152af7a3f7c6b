// `npm run test:bench`: the benchmark's end-to-end smoke test (every subject and scenario in quick mode, about two
// minutes) and the propagation times on a real API server (test/bench/propagation.test.ts), kept out of `npm test`,
// which asserts behaviour, not speed; `npm run bench -- --quick` runs the same bench by hand.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    testTimeout: 180_000, // scale.test.ts sets its own (10 minutes)
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
