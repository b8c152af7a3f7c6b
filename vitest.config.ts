import { defineConfig } from 'vitest/config';

const include = [
  'gateway/**/*.test.ts',
  'console/**/*.test.ts',
  'billing/**/*.test.ts',
  'operator/**/*.test.ts',
  'crds/**/*.test.ts',
  'docs/**/*.test.ts',
  'test/**/*.test.ts',
];
// The bench's two-minute smoke run is `npm run test:bench` (vitest.bench.config.ts), not part of npm test.
const exclude = ['test/bench/**', '**/node_modules/**'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'suite', include, exclude } },
      // The money, limit and revocation tests across gateway processes, and the Redis Cluster failover, run a second
      // time, unchanged, with leased admission on in every gateway process (SVC_ADMISSION_LEASES=1): the same exact
      // figures must hold (test/helpers/fleet.ts checks the leases were in play).
      {
        extends: true,
        test: {
          name: 'leases',
          include: ['test/billing/limits.test.ts', 'test/billing/money.test.ts', 'test/billing/revocation.test.ts', 'test/redis-cluster/failover.test.ts'],
          env: { SVC_TEST_ADMISSION_LEASES: '1' },
        },
      },
    ],
  },
});
