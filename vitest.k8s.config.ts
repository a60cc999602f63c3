import { defineConfig } from 'vitest/config';

// The Kubernetes suite (`make test-k8s`): each file starts its own etcd + kube-apiserver (test/harness/kube.ts).
export default defineConfig({
  test: {
    include: ['test/k8s/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    testTimeout: 120_000,
    // beforeAll may build etcd/kube-apiserver (test/cluster/build.sh) on a machine without the cached binaries.
    hookTimeout: 40 * 60_000,
    teardownTimeout: 60_000,
    pool: 'forks',
    // One control plane at a time: an API server wants most of a 2-core machine while it starts.
    fileParallelism: false,
    maxWorkers: 1,
  },
});
