import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The suites write real files and spawn real processes; two cores, so two at a time.
    maxWorkers: 2,
  },
});
