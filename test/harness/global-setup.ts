// vitest globalSetup: one Postgres and one Redis for the whole run. Tests read their URLs with
// `inject('databaseUrl')` / `inject('redisUrl')`; child processes (gateways under test) get the
// TEST_DATABASE_URL / TEST_REDIS_URL environment variables.
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.ts';
import { startRedis } from './redis.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the harness Postgres; use `createTestDatabase()` for an isolated database. */
    databaseUrl: string;
    /** URL of the harness Redis; isolate keys with `testKeyPrefix()`. */
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgres, redis] = await Promise.allSettled([startPostgres(), startRedis()]);
  if (postgres.status === 'rejected' || redis.status === 'rejected') {
    if (postgres.status === 'fulfilled') await postgres.value.stop();
    if (redis.status === 'fulfilled') await redis.value.stop();
    const reason = postgres.status === 'rejected' ? postgres.reason : redis.status === 'rejected' ? redis.reason : null;
    throw reason;
  }
  project.provide('databaseUrl', postgres.value.url);
  project.provide('redisUrl', redis.value.url);
  process.env['TEST_DATABASE_URL'] = postgres.value.url;
  process.env['TEST_REDIS_URL'] = redis.value.url;
  return async () => {
    await Promise.all([postgres.value.stop(), redis.value.stop()]);
  };
}
