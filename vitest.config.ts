import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'gateway/**/*.test.ts',
      'console/**/*.test.ts',
      'billing/**/*.test.ts',
      'operator/**/*.test.ts',
      'crds/**/*.test.ts',
      'docs/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // The bench's two-minute smoke run is `npm run test:bench` (vitest.bench.config.ts), not part of npm test.
    exclude: ['test/bench/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
