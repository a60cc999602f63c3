import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['gateway/test/**/*.test.ts', 'operator/test/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/k8s/**', 'test/bench/**'],
    globalSetup: ['test/harness/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
