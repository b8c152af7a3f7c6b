import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['gateway/**/*.test.ts', 'console/**/*.test.ts', 'operator/**/*.test.ts', 'crds/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
