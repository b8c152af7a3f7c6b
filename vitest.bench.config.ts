// `npm run test:bench`: the benchmark's end-to-end smoke test (every subject and scenario in quick mode, about two
// minutes), kept out of `npm test`; `npm run bench -- --quick` runs the same bench by hand.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
